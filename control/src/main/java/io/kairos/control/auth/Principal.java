package io.kairos.control.auth;

import io.kairos.control.state.TokenRecord;

/**
 * Who made a request, and what for: a user (maybe an admin), a join token, a node, the
 * kube-scheduler extender, or a job's step credential. Each scope reaches its own endpoints only:
 * the user API takes users and admins (and a step credential, which {@link JobScope} confines to
 * its own job's steps and reads); registration takes a join token or a node; heartbeats take a
 * node, for itself; the extender's verbs take the extender.
 *
 * @param user the user's name; a node's name for {@link #NODE}; the job's owner for a step
 *     credential
 * @param role {@link TokenRecord#ADMIN}, {@link TokenRecord#USER}, {@link TokenRecord#JOIN}, {@link
 *     #NODE}, {@link TokenRecord#EXTENDER} or {@link TokenRecord#JOB}
 * @param scope what the token may reach when less than its role's all ({@link TokenRecord#scope}):
 *     a step credential's {@code job:<id>:<attempt>}; null for none
 */
public record Principal(String user, String role, String scope) {
  /** A node proving itself with its own credential (a node secret or a node certificate). */
  public static final String NODE = "node";

  /** A principal of the whole role. */
  public Principal(String user, String role) {
    this(user, role, null);
  }

  public static Principal node(String name) {
    return new Principal(name, NODE);
  }

  public boolean isAdmin() {
    return TokenRecord.ADMIN.equals(role);
  }

  /**
   * A user or an admin: what the user API takes; a job's step credential too, acting for the job's
   * owner, within the paths {@link JobScope} lets it reach.
   */
  public boolean isUser() {
    return TokenRecord.USER.equals(role) || isAdmin() || isJobScoped();
  }

  /** A join token: it registers new nodes, nothing else. */
  public boolean isJoin() {
    return TokenRecord.JOIN.equals(role);
  }

  /** A node, by its own credential; {@link #user} is its name. */
  public boolean isNode() {
    return NODE.equals(role);
  }

  public boolean isExtender() {
    return TokenRecord.EXTENDER.equals(role);
  }

  /** The job a step credential acts for; 0 for any other principal. */
  public long scopedJob() {
    return isJobScoped() ? TokenRecord.scopedJob(scope) : 0;
  }

  /** Whether this is a job's step credential, which reaches only that job's steps and reads. */
  public boolean isJobScoped() {
    return TokenRecord.JOB.equals(role);
  }

  /** What this scope is, in words, for refusals ("a join token"). */
  public String describe() {
    return switch (role) {
      case TokenRecord.ADMIN -> "an admin token";
      case TokenRecord.USER -> "a user token";
      case TokenRecord.JOIN -> "a join token";
      case NODE -> "node " + user + "'s credential";
      case TokenRecord.EXTENDER -> "the extender's credential";
      case TokenRecord.JOB -> "job " + scopedJob() + "'s step credential";
      default -> "a '" + role + "' credential";
    };
  }
}

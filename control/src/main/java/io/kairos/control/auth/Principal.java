package io.kairos.control.auth;

import io.kairos.control.state.TokenRecord;

/**
 * Who made a request, and what for: a user (maybe an admin), a join token, a node, or the
 * kube-scheduler extender. Each scope reaches its own endpoints only: the user API takes users and
 * admins; registration takes a join token or a node; heartbeats take a node, for itself; the
 * extender's verbs take the extender.
 *
 * @param user the user's name; a node's name for {@link #NODE}
 * @param role {@link TokenRecord#ADMIN}, {@link TokenRecord#USER}, {@link TokenRecord#JOIN}, {@link
 *     #NODE} or {@link TokenRecord#EXTENDER}
 */
public record Principal(String user, String role) {
  /** A node proving itself with its own credential (a node secret or a node certificate). */
  public static final String NODE = "node";

  public static Principal node(String name) {
    return new Principal(name, NODE);
  }

  public boolean isAdmin() {
    return TokenRecord.ADMIN.equals(role);
  }

  /** A user or an admin: what the user API takes. */
  public boolean isUser() {
    return TokenRecord.USER.equals(role) || isAdmin();
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

  /** What this scope is, in words, for refusals ("a join token"). */
  public String describe() {
    return switch (role) {
      case TokenRecord.ADMIN -> "an admin token";
      case TokenRecord.USER -> "a user token";
      case TokenRecord.JOIN -> "a join token";
      case NODE -> "node " + user + "'s credential";
      case TokenRecord.EXTENDER -> "the extender's credential";
      default -> "a '" + role + "' credential";
    };
  }
}

package io.kairos.control.auth;

import io.kairos.control.state.TokenRecord;

/**
 * Who made a request: a user (maybe an admin), an agent, or a job's step credential.
 *
 * @param scope what the token may reach when less than its role's all ({@link TokenRecord#scope}):
 *     a step credential's {@code job:<id>:<attempt>}; null for none
 */
public record Principal(String user, String role, String scope) {
  /** A principal of the whole role. */
  public Principal(String user, String role) {
    this(user, role, null);
  }

  public boolean isAdmin() {
    return "admin".equals(role);
  }

  public boolean isAgent() {
    return "agent".equals(role);
  }

  /** The job a step credential acts for; 0 for any other principal. */
  public long scopedJob() {
    return TokenRecord.JOB.equals(role) ? TokenRecord.scopedJob(scope) : 0;
  }

  /** Whether this is a job's step credential, which reaches only that job's steps and reads. */
  public boolean isJobScoped() {
    return TokenRecord.JOB.equals(role);
  }
}

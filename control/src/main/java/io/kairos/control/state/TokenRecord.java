package io.kairos.control.state;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * A bearer token as stored: its SHA-256 (hex), never the token itself.
 *
 * @param role {@code admin}, {@code user}, {@code agent}, or {@code job} for a job's step
 *     credential
 * @param scope what the token may reach, when less than its role's all: a step credential's is
 *     {@code job:<id>:<attempt>} ({@link #jobScope}), job {@code id}'s steps and its own reads
 *     while attempt {@code attempt} runs; null for none (left out of the log's JSON, so older
 *     entries encode as they did)
 */
public record TokenRecord(
    String sha256,
    String user,
    String role,
    long createdMs,
    @JsonInclude(JsonInclude.Include.NON_NULL) String scope) {
  public static final String ADMIN = "admin";
  public static final String USER = "user";
  public static final String AGENT = "agent";

  /** A job's step credential: it acts for the job's owner, within {@link #scope} only. */
  public static final String JOB = "job";

  private static final String JOB_SCOPE = "job:";

  /** A token of the whole role. */
  public TokenRecord(String sha256, String user, String role, long createdMs) {
    this(sha256, user, role, createdMs, null);
  }

  /** The scope of job {@code jobId}'s step credential for attempt {@code attempt}. */
  public static String jobScope(long jobId, int attempt) {
    return JOB_SCOPE + jobId + ":" + attempt;
  }

  /** The job a {@code job:<id>:<attempt>} scope names; 0 for another scope or none. */
  public static long scopedJob(String scope) {
    return part(scope, 0);
  }

  /** The attempt a {@code job:<id>:<attempt>} scope names; 0 for another scope or none. */
  public static int scopedAttempt(String scope) {
    return (int) part(scope, 1);
  }

  private static long part(String scope, int index) {
    if (scope == null || !scope.startsWith(JOB_SCOPE)) {
      return 0;
    }
    String[] parts = scope.substring(JOB_SCOPE.length()).split(":");
    try {
      return parts.length == 2 ? Long.parseLong(parts[index]) : 0;
    } catch (NumberFormatException e) {
      return 0;
    }
  }
}

package io.kairos.control.state;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * A credential as stored: the SHA-256 (hex) of a bearer token, never the token itself; or, for a
 * certificate ({@code certificate} true), the hash that {@code Tokens.certificateKey} makes of its
 * public key, which only a TLS client certificate is matched against, never a bearer token.
 *
 * <p>The fields after {@code createdMs} are left out of the log and snapshots while 0 (false), so
 * tokens from before them read and write the same bytes.
 *
 * @param role {@link #ADMIN}, {@link #USER}, {@link #JOIN}, {@link #EXTENDER}, or {@link #JOB} for
 *     a job's step credential
 * @param expiresMs when it stops being accepted (epoch millis); 0 for never
 * @param revokedMs when an admin revoked it; 0 while not revoked. A revoked token is kept, so a
 *     replica never accepts its bootstrap copy again
 * @param lastUsedMs the latest use the log knows of (written about once a minute); 0 for none
 * @param certificate whether this is an extender's client certificate rather than a bearer token
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
    @JsonInclude(JsonInclude.Include.NON_DEFAULT) long expiresMs,
    @JsonInclude(JsonInclude.Include.NON_DEFAULT) long revokedMs,
    @JsonInclude(JsonInclude.Include.NON_DEFAULT) long lastUsedMs,
    @JsonInclude(JsonInclude.Include.NON_DEFAULT) boolean certificate,
    @JsonInclude(JsonInclude.Include.NON_NULL) String scope) {
  public static final String ADMIN = "admin";
  public static final String USER = "user";

  /** A join token: registers new nodes (stored as "agent", its name before node credentials). */
  public static final String JOIN = "agent";

  /** Kept for code written before join tokens had their own name. */
  public static final String AGENT = JOIN;

  /** The kube-scheduler extender: its verbs and nothing else. */
  public static final String EXTENDER = "extender";

  /** A job's step credential: it acts for the job's owner, within {@link #scope} only. */
  public static final String JOB = "job";

  private static final String JOB_SCOPE = "job:";

  /** How many hex digits of the hash make a token's id. */
  public static final int ID_LENGTH = 12;

  /** A token that never expires, never used, not revoked. */
  public TokenRecord(String sha256, String user, String role, long createdMs) {
    this(sha256, user, role, createdMs, 0, 0, 0, false, null);
  }

  /** A token of the whole role, with these lifetimes. */
  public TokenRecord(
      String sha256,
      String user,
      String role,
      long createdMs,
      long expiresMs,
      long revokedMs,
      long lastUsedMs,
      boolean certificate) {
    this(sha256, user, role, createdMs, expiresMs, revokedMs, lastUsedMs, certificate, null);
  }

  /** A job's step credential for {@code scope} ({@link #jobScope}). */
  public static TokenRecord stepCredential(
      String sha256, String user, long createdMs, String scope) {
    return new TokenRecord(sha256, user, JOB, createdMs, 0, 0, 0, false, scope);
  }

  /** What lists show and revocations name: the first {@link #ID_LENGTH} hex digits of the hash. */
  @JsonIgnore
  public String id() {
    return sha256.length() <= ID_LENGTH ? sha256 : sha256.substring(0, ID_LENGTH);
  }

  @JsonIgnore
  public boolean isRevoked() {
    return revokedMs != 0;
  }

  /** Whether it has expired at {@code nowMs}. */
  public boolean isExpired(long nowMs) {
    return expiresMs != 0 && nowMs >= expiresMs;
  }

  TokenRecord revoked(long atMs) {
    return new TokenRecord(
        sha256, user, role, createdMs, expiresMs, atMs, lastUsedMs, certificate, scope);
  }

  TokenRecord usedAt(long atMs) {
    return atMs <= lastUsedMs
        ? this
        : new TokenRecord(
            sha256, user, role, createdMs, expiresMs, revokedMs, atMs, certificate, scope);
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

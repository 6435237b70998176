package io.kairos.control.state;

/**
 * A bearer token as stored: its SHA-256 (hex), never the token itself.
 *
 * @param role {@code admin}, {@code user} or {@code agent}
 */
public record TokenRecord(String sha256, String user, String role, long createdMs) {
  public static final String ADMIN = "admin";
  public static final String USER = "user";
  public static final String AGENT = "agent";
}

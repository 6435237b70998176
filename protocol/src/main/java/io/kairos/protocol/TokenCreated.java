package io.kairos.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * The new credential, shown once; the controller keeps only its hash.
 *
 * @param token the bearer token; absent for an extender certificate
 * @param id what {@code kairos token list} shows and {@code kairos token revoke} takes
 * @param role admin, user, join or extender
 * @param expiresAt ISO-8601, or absent when it never expires
 * @param certificate for an extender public key: its client certificate (PEM, then the CA's)
 * @param ca with a certificate: the cluster CA certificates (PEM), to verify the controller with
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record TokenCreated(
    String token,
    String user,
    boolean admin,
    String id,
    String role,
    String expiresAt,
    String certificate,
    String ca) {

  public TokenCreated(String token, String user, boolean admin) {
    this(token, user, admin, null, null, null, null, null);
  }
}

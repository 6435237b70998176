package io.kairos.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * A credential as {@code GET /api/v1/tokens} lists it (admins only): never the token, only what
 * identifies and describes it.
 *
 * @param id the first 12 hex digits of the token's SHA-256 (of the public key, for a certificate):
 *     what {@code kairos token revoke} takes
 * @param role admin, user, join or extender
 * @param kind {@code bearer} or {@code certificate} (an extender's client certificate)
 * @param state {@code active}, {@code expired} or {@code revoked}
 * @param createdAt ISO-8601; absent for the bootstrap tokens of a data directory
 * @param expiresAt ISO-8601; absent when it never expires
 * @param lastUsedAt ISO-8601, within about a minute (uses are written to the log once a minute);
 *     absent when never used
 * @param revokedAt ISO-8601, when revoked
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record TokenView(
    String id,
    String user,
    String role,
    String kind,
    String state,
    String createdAt,
    String expiresAt,
    String lastUsedAt,
    String revokedAt) {}

package io.kairos.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * {@code POST /api/v1/tokens} (admin only): a new credential.
 *
 * @param user who a user or admin token is for; optional for a join or extender token
 * @param admin an admin token
 * @param join a join token: it registers new nodes and nothing else
 * @param extender a kube-scheduler extender credential: the extender's verbs and nothing else
 * @param ttl how long it is valid: a number and {@code s}, {@code m}, {@code h} or {@code d}
 *     ({@code 24h}), or {@code never}; absent for the kind's default (join 24h, user and admin 90d,
 *     extender 365d)
 * @param publicKey for an extender: a public key (X.509 SubjectPublicKeyInfo, base64) to certify
 *     instead of making a bearer token; the reply carries a client certificate of the cluster CA
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record TokenRequest(
    String user, Boolean admin, Boolean join, Boolean extender, String ttl, String publicKey) {

  /** A user or admin token with the default lifetime. */
  public TokenRequest(String user, Boolean admin) {
    this(user, admin, null, null, null, null);
  }
}

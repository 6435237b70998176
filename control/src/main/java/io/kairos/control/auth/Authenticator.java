package io.kairos.control.auth;

import io.kairos.control.raft.KairosStateMachine;
import io.kairos.control.state.TokenRecord;
import io.kairos.control.tls.Role;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Map;
import java.util.Optional;

/**
 * Resolves a request's credential to a {@link Principal}:
 *
 * <ol>
 *   <li>a bearer token: a node secret ({@code knode_...}) names the node bound to it; any other
 *       token is looked up by its hash, in the replicated state first, then among this replica's
 *       bootstrap tokens (valid here at once, before the group has committed them). A revoked or
 *       expired token is refused, saying which, and so is a certificate's record (it is matched
 *       only against a certificate);
 *   <li>else a TLS client certificate (already verified against the cluster CA by the TLS layer): a
 *       node certificate names the node its key is bound to; an extender certificate is looked up
 *       by its key among the tokens, revocable and expiring like one.
 * </ol>
 *
 * Each accepted token's use is noted in {@link TokenUses}, never written per request.
 */
public final class Authenticator {
  private final KairosStateMachine stateMachine;
  private final Map<String, TokenRecord> local;
  private final InstantSource clock;
  private final TokenUses uses;

  /** The outcome: a principal, or why none. */
  public sealed interface Verdict {
    record Accepted(Principal principal) implements Verdict {}

    record Refused(String why) implements Verdict {}
  }

  public Authenticator(KairosStateMachine stateMachine, Map<String, TokenRecord> localByHash) {
    this(stateMachine, localByHash, InstantSource.system(), new TokenUses());
  }

  public Authenticator(
      KairosStateMachine stateMachine,
      Map<String, TokenRecord> localByHash,
      InstantSource clock,
      TokenUses uses) {
    this.stateMachine = stateMachine;
    this.local = Map.copyOf(localByHash);
    this.clock = clock;
    this.uses = uses;
  }

  /** The principal for an {@code Authorization} header value, if it names a known token. */
  public Optional<Principal> authenticate(String header) {
    return authenticate(header, null) instanceof Verdict.Accepted(Principal p)
        ? Optional.of(p)
        : Optional.empty();
  }

  /**
   * The principal for an {@code Authorization} header (null: none) and a verified TLS client
   * certificate chain (null or empty: none). The header wins when both are there.
   */
  public Verdict authenticate(String header, X509Certificate[] clientChain) {
    if (header != null) {
      return bearer(header);
    }
    if (clientChain != null && clientChain.length > 0) {
      return certificate(clientChain[0]);
    }
    return new Verdict.Refused("this endpoint needs a bearer token");
  }

  private Verdict bearer(String header) {
    if (!header.regionMatches(true, 0, "Bearer ", 0, 7)) {
      return new Verdict.Refused("the Authorization header must be 'Bearer TOKEN'");
    }
    String token = header.substring(7).trim();
    if (token.isEmpty() || token.length() > 256) {
      return new Verdict.Refused("the bearer token is not valid");
    }
    if (NodeCredentials.isSecret(token)) {
      String binding = NodeCredentials.ofSecret(token);
      return stateMachine
          .read(s -> s.nodeWithCredential(binding))
          .<Verdict>map(node -> new Verdict.Accepted(Principal.node(node)))
          .orElseGet(
              () ->
                  new Verdict.Refused(
                      "the node secret is not bound to a node (an admin may have reset it: the"
                          + " agent registers again with a join token)"));
    }
    String hash = Tokens.hash(token);
    TokenRecord record = stateMachine.read(s -> s.token(hash)).orElse(local.get(hash));
    if (record == null || record.certificate()) {
      return new Verdict.Refused("the bearer token is not valid");
    }
    return accept(record, "token");
  }

  private Verdict certificate(X509Certificate leaf) {
    Optional<Role> role = Role.of(leaf);
    if (role.isEmpty()) {
      return new Verdict.Refused("this endpoint needs a bearer token");
    }
    return switch (role.get()) {
      case NODE -> {
        String binding = NodeCredentials.ofCertificate(leaf);
        yield stateMachine
            .read(s -> s.nodeWithCredential(binding))
            .<Verdict>map(node -> new Verdict.Accepted(Principal.node(node)))
            .orElseGet(
                () ->
                    new Verdict.Refused(
                        "this node certificate's key is not bound to a node (an admin may have"
                            + " reset it: the agent registers again with a join token)"));
      }
      case EXTENDER -> {
        String key = Tokens.certificateKey(leaf);
        TokenRecord record = stateMachine.read(s -> s.token(key)).orElse(null);
        yield record == null || !record.certificate()
            ? new Verdict.Refused("this extender certificate is not known to the cluster")
            : accept(record, "certificate");
      }
      case REPLICA, USER -> new Verdict.Refused("this endpoint needs a bearer token");
    };
  }

  private Verdict accept(TokenRecord record, String what) {
    long now = clock.millis();
    if (record.isRevoked()) {
      return new Verdict.Refused(
          "the "
              + what
              + " "
              + record.id()
              + " was revoked at "
              + Instant.ofEpochMilli(record.revokedMs()));
    }
    if (record.isExpired(now)) {
      return new Verdict.Refused(
          "the "
              + what
              + " "
              + record.id()
              + " expired at "
              + Instant.ofEpochMilli(record.expiresMs())
              + "; an admin makes a new one with `kairos token create`");
    }
    uses.record(record.sha256(), now);
    return new Verdict.Accepted(new Principal(record.user(), record.role(), record.scope()));
  }
}

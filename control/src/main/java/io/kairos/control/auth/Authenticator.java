package io.kairos.control.auth;

import io.kairos.control.raft.KairosStateMachine;
import io.kairos.control.state.TokenRecord;
import java.util.Map;
import java.util.Optional;

/**
 * Resolves a bearer token to a {@link Principal}: this replica's bootstrap tokens (from its data
 * directory, valid at once) and every token in the replicated state (valid on every replica).
 */
public final class Authenticator {
  private final KairosStateMachine stateMachine;
  private final Map<String, TokenRecord> local;

  public Authenticator(KairosStateMachine stateMachine, Map<String, TokenRecord> localByHash) {
    this.stateMachine = stateMachine;
    this.local = Map.copyOf(localByHash);
  }

  /** The principal for an {@code Authorization} header value, if it names a known token. */
  public Optional<Principal> authenticate(String header) {
    if (header == null || !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
      return Optional.empty();
    }
    String token = header.substring(7).trim();
    if (token.isEmpty() || token.length() > 256) {
      return Optional.empty();
    }
    String hash = Tokens.hash(token);
    TokenRecord record = local.get(hash);
    if (record == null) {
      record = stateMachine.read(s -> s.token(hash)).orElse(null);
    }
    return Optional.ofNullable(record).map(r -> new Principal(r.user(), r.role(), r.scope()));
  }
}

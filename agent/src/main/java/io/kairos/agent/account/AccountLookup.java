package io.kairos.agent.account;

import java.io.IOException;
import java.util.Optional;

/** Finds a Unix account by name: the node's NSS in production ({@link Nss}), a table in tests. */
@FunctionalInterface
public interface AccountLookup {
  /**
   * The account named {@code name}; empty when the node has none of that name.
   *
   * @throws IOException when the lookup itself failed (NSS unreachable, getent missing)
   */
  Optional<Account> find(String name) throws IOException;
}

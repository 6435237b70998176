package io.kairos.control.state;

import java.util.Objects;

/**
 * A Kairos user's row in the replicated user table: the Unix account their jobs run as. A user
 * without a row runs as the account of the same name.
 */
public record UserRecord(String name, String unixUser) {
  public UserRecord {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(unixUser, "unixUser");
  }
}

package io.kairos.control.sched;

import io.kairos.config.Tenancy;
import io.kairos.config.TenancyYaml;
import io.kairos.control.state.ConfigVersion;
import java.util.Optional;

/**
 * The tenancy a replica schedules and admits with: the replicated configuration's current version
 * ({@code kairos config apply}) once one is applied, else the one this replica was started with
 * ({@code kairos server --tenancy FILE}, or none). Each version is parsed once and kept while it is
 * current; every replica parses the same text, so every replica decides with the same tenancy.
 * Thread-safe.
 */
public final class SiteTenancy {
  private final Optional<Tenancy> startup;
  private volatile Parsed parsed;

  private record Parsed(long version, Optional<Tenancy> tenancy) {}

  public SiteTenancy(Optional<Tenancy> startup) {
    this.startup = startup;
  }

  /** The tenancy given the replicated configuration's current version. */
  public Optional<Tenancy> of(Optional<ConfigVersion> current) {
    if (current.isEmpty()) {
      return startup;
    }
    ConfigVersion v = current.get();
    Parsed p = parsed;
    if (p == null || p.version() != v.version()) {
      // Valid: the log applied it only after parsing it.
      p =
          new Parsed(
              v.version(), Optional.of(TenancyYaml.parse(v.yaml(), "config v" + v.version())));
      parsed = p;
    }
    return p.tenancy();
  }

  /** The one this replica was started with. */
  public Optional<Tenancy> startup() {
    return startup;
  }
}

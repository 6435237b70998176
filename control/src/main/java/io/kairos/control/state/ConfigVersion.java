package io.kairos.control.state;

import java.util.Objects;

/**
 * One version of the site's replicated configuration: the tenancy document (queues, cohorts,
 * quotas, priority classes, accounts, scheduling settings; docs/tenancy.md) as an admin applied it
 * with {@code kairos config apply}. The text is what goes through the log; every replica parses the
 * same text with the same code, so every replica schedules with the same configuration.
 *
 * @param version 1, 2, ...: one more than the version it replaced
 * @param yaml the document as applied
 * @param sha256 the document's SHA-256, hex (what {@code kairos config show} prints to compare)
 * @param appliedMs when it was applied (the proposing replica's clock)
 * @param by who applied it: a user's name, or {@code kairos server --tenancy} for the file a first
 *     start brought
 */
public record ConfigVersion(long version, String yaml, String sha256, long appliedMs, String by) {
  /** Versions kept: the current one and the 63 before it. */
  public static final int KEPT = 64;

  /** Bytes a document may have (a tenancy file of a large site is tens of kilobytes). */
  public static final int MAX_BYTES = 1 << 20;

  public ConfigVersion {
    Objects.requireNonNull(yaml, "yaml");
    Objects.requireNonNull(sha256, "sha256");
    Objects.requireNonNull(by, "by");
  }
}

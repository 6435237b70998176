package io.kairos.control.state;

import io.kairos.config.TenancyYaml;
import io.kairos.control.state.ControlCommand.ApplyConfig;
import io.kairos.core.tenancy.QueueSpec;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * The replicated configuration's versions ({@link ConfigVersion}): the current one and the {@link
 * ConfigVersion#KEPT} before it, oldest first. Decides {@link ApplyConfig} deterministically: the
 * version it was made against must still be current, the document must parse, and unless forced it
 * must keep every queue a live job is in.
 */
final class SiteConfigs {
  private final ArrayDeque<ConfigVersion> versions = new ArrayDeque<>();

  ControlResult apply(ApplyConfig c, Records records) {
    long current = current().map(ConfigVersion::version).orElse(0L);
    if (c.expectedVersion() >= 0 && c.expectedVersion() != current) {
      return ControlResult.conflict(
          "the configuration is at version "
              + current
              + ", not "
              + c.expectedVersion()
              + ": another change was applied meanwhile (run `kairos config apply` again to see"
              + " the diff against it)");
    }
    Set<String> queues;
    try {
      queues =
          TenancyYaml.parse(c.yaml(), "config").config().queues().stream()
              .map(QueueSpec::name)
              .collect(Collectors.toSet());
    } catch (IllegalArgumentException e) {
      return new ControlResult(400, e.getMessage(), List.of());
    }
    if (!c.force()) {
      var orphans = new TreeMap<String, Integer>();
      for (JobRecord j : records.activeJobs()) {
        String q = j.request.queue();
        if (q != null && !queues.contains(q)) {
          orphans.merge(q, 1, Integer::sum);
        }
      }
      if (!orphans.isEmpty()) {
        return ControlResult.conflict(
            "the new configuration removes queue(s) that live jobs are in: "
                + orphans.entrySet().stream()
                    .map(e -> e.getKey() + " (" + e.getValue() + " pending or running)")
                    .collect(Collectors.joining(", "))
                + "; let them finish or cancel them first, or apply with --force (pending ones"
                + " then wait with the reason \"unknown queue\")");
      }
    }
    versions.addLast(new ConfigVersion(current + 1, c.yaml(), c.sha256(), c.atMs(), c.by()));
    while (versions.size() > ConfigVersion.KEPT) {
      versions.removeFirst();
    }
    return ControlResult.ok(List.of(current + 1));
  }

  Optional<ConfigVersion> current() {
    return Optional.ofNullable(versions.peekLast());
  }

  /** Oldest first. */
  List<ConfigVersion> history() {
    return List.copyOf(versions);
  }

  void restore(List<ConfigVersion> kept) {
    versions.clear();
    versions.addAll(kept);
  }
}

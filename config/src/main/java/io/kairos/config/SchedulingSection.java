package io.kairos.config;

import static io.kairos.config.YamlChecks.absent;
import static io.kairos.config.YamlChecks.kind;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.core.sched.MigrationSettings;
import io.kairos.core.sched.preempt.ProtectionPolicy;
import io.kairos.core.tenancy.Tenants;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The tenancy file's time settings: {@code fairShare} (the usage half-life) and {@code scheduling}
 * (preemption grace, protection against thrashing, the large-gang starvation guard). Every key is
 * optional; what is left out keeps its default.
 */
final class SchedulingSection {
  private static final List<String> FAIR_SHARE_KEYS = List.of("halfLife");
  private static final List<String> SCHEDULING_KEYS =
      List.of("preemptionGrace", "protection", "starvation", "migration");
  private static final List<String> MIGRATION_KEYS =
      List.of("enabled", "protectionWindow", "restartCost", "consolidationGain");
  private static final List<String> PROTECTION_KEYS =
      List.of("minRuntime", "window", "maxPreemptions", "protectFor");
  private static final List<String> STARVATION_KEYS = List.of("minGpus", "maxWait");

  private static final Pattern DURATION = Pattern.compile("([0-9]+)([smhd])");

  private final YamlChecks c;

  SchedulingSection(YamlChecks checks) {
    this.c = checks;
  }

  /**
   * The {@code fairShare} block: the half-life, default {@link TenancyYaml#DEFAULT_HALF_LIFE_SEC}.
   */
  long fairShare(JsonNode node) {
    if (absent(node)) {
      return TenancyYaml.DEFAULT_HALF_LIFE_SEC;
    }
    if (!c.mapping(node, "fairShare")) {
      return TenancyYaml.DEFAULT_HALF_LIFE_SEC;
    }
    c.keys(node, "fairShare", FAIR_SHARE_KEYS);
    JsonNode value = node.get("halfLife");
    if (absent(value)) {
      return TenancyYaml.DEFAULT_HALF_LIFE_SEC;
    }
    Long seconds = duration(value, "fairShare.halfLife", false);
    return seconds == null ? TenancyYaml.DEFAULT_HALF_LIFE_SEC : seconds;
  }

  /**
   * The {@code scheduling} block; every key optional, defaults {@link Tenants.Settings#DEFAULT}.
   */
  Tenants.Settings scheduling(JsonNode node) {
    var d = Tenants.Settings.DEFAULT;
    if (absent(node) || !c.mapping(node, "scheduling")) {
      return d;
    }
    c.keys(node, "scheduling", SCHEDULING_KEYS);
    long grace =
        orElse(
            duration(node.get("preemptionGrace"), "scheduling.preemptionGrace", true),
            d.graceSec());
    ProtectionPolicy p = d.protection();
    JsonNode pn = node.get("protection");
    String pp = "scheduling.protection";
    if (!absent(pn) && c.mapping(pn, pp)) {
      c.keys(pn, pp, PROTECTION_KEYS);
      long minRuntime =
          orElse(duration(pn.get("minRuntime"), pp + ".minRuntime", true), p.graceSec());
      long window = orElse(duration(pn.get("window"), pp + ".window", true), p.windowSec());
      Long max = c.integer(pn, "maxPreemptions", pp, false, 1, Integer.MAX_VALUE);
      long protectFor =
          orElse(
              duration(pn.get("protectFor"), pp + ".protectFor", true),
              p.protectAfterPreemptionsSec());
      p =
          new ProtectionPolicy(
              minRuntime,
              window,
              max == null ? p.maxPreemptionsPerWindow() : max.intValue(),
              protectFor);
    }
    int minGpus = d.starvationMinGpus();
    long maxWait = d.starvationMaxWaitSec();
    JsonNode sn = node.get("starvation");
    String sp = "scheduling.starvation";
    if (!absent(sn) && c.mapping(sn, sp)) {
      c.keys(sn, sp, STARVATION_KEYS);
      Long gpus = c.integer(sn, "minGpus", sp, false, 0, Integer.MAX_VALUE);
      minGpus = gpus == null ? minGpus : gpus.intValue();
      maxWait = orElse(duration(sn.get("maxWait"), sp + ".maxWait", true), maxWait);
    }
    return new Tenants.Settings(p, grace, minGpus, maxWait);
  }

  /**
   * The {@code scheduling.migration} block: empty when absent or {@code enabled: false}; every
   * other key optional, defaults {@link MigrationSettings#DEFAULT}.
   */
  Optional<MigrationSettings> migration(JsonNode scheduling) {
    if (absent(scheduling) || !scheduling.isObject()) {
      return Optional.empty();
    }
    JsonNode node = scheduling.get("migration");
    String path = "scheduling.migration";
    if (absent(node) || !c.mapping(node, path)) {
      return Optional.empty();
    }
    c.keys(node, path, MIGRATION_KEYS);
    var d = MigrationSettings.DEFAULT;
    Boolean enabled = c.bool(node, "enabled", path);
    long window =
        orElse(
            duration(node.get("protectionWindow"), path + ".protectionWindow", true),
            d.protectionWindowSec());
    long restart =
        orElse(duration(node.get("restartCost"), path + ".restartCost", true), d.restartCostSec());
    double gain = d.consolidationGain();
    JsonNode g = node.get("consolidationGain");
    if (!absent(g)) {
      if (!g.isNumber() || g.asDouble() < 0 || g.asDouble() > 1) {
        c.problem(
            path + ".consolidationGain",
            "must be a number from 0 to 1, got " + (g.isNumber() ? g.asText() : kind(g)),
            "write the fraction of a spread gang's run time saved when packed, e.g. 0.3");
      } else {
        gain = g.asDouble();
      }
    }
    if (enabled == null || !enabled) {
      return Optional.empty();
    }
    return Optional.of(new MigrationSettings(window, restart, gain));
  }

  private static long orElse(Long value, long otherwise) {
    return value == null ? otherwise : value;
  }

  /**
   * A duration such as {@code 30s}, {@code 10m}, {@code 12h} or {@code 7d}, in seconds; null when
   * absent or wrong (the problem is recorded).
   */
  private Long duration(JsonNode value, String path, boolean zeroAllowed) {
    if (absent(value)) {
      return null;
    }
    String fix =
        "write a "
            + (zeroAllowed ? "" : "positive ")
            + "duration such as "
            + (zeroAllowed ? "0s, " : "")
            + "30s, 10m, 12h or 7d";
    if (!value.isTextual()) {
      c.problem(path, "must be a duration with a unit, got " + kind(value), fix);
      return null;
    }
    Matcher m = DURATION.matcher(value.asText().strip());
    if (!m.matches()) {
      c.problem(path, "not a duration: '" + value.asText() + "'", fix);
      return null;
    }
    long unit =
        switch (m.group(2)) {
          case "s" -> 1;
          case "m" -> 60;
          case "h" -> 3600;
          default -> 86_400;
        };
    try {
      long seconds = Math.multiplyExact(Long.parseLong(m.group(1)), unit);
      if (seconds <= 0 && !zeroAllowed) {
        c.problem(path, "must be > 0, got '" + value.asText() + "'", fix);
        return null;
      }
      if (seconds > (1L << 40)) {
        c.problem(path, "too large: '" + value.asText() + "'", fix);
        return null;
      }
      return seconds;
    } catch (NumberFormatException | ArithmeticException e) {
      c.problem(path, "too large: '" + value.asText() + "'", fix);
      return null;
    }
  }
}

package io.kairos.config;

import static io.kairos.config.YamlChecks.absent;
import static io.kairos.config.YamlChecks.entryPath;
import static io.kairos.config.YamlChecks.firstLine;
import static io.kairos.config.YamlChecks.kind;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.core.tenancy.PreemptionPolicy;
import io.kairos.core.tenancy.QueueDefaults;
import io.kairos.core.tenancy.QueueSpec;
import io.kairos.core.tenancy.Resource;
import io.kairos.core.tenancy.ResourceQuota;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The tenancy file's {@code queues}: each with its quotas per resource, its preemption policy and
 * its defaults for jobs. A queue with a problem is left out (the problem is recorded), so the rest
 * are still checked.
 */
final class QueueSection {
  private static final List<String> QUEUE_KEYS =
      List.of("name", "cohort", "quotas", "preemption", "defaults");
  private static final List<String> QUOTA_KEYS =
      List.of("nominal", "borrowingLimit", "lendingLimit");
  private static final List<String> PREEMPTION_KEYS =
      List.of("withinQueue", "reclaimWithinCohort", "borrowWithinCohort", "fairShare");
  private static final List<String> BORROW_KEYS = List.of("policy", "maxPriorityThreshold");
  private static final List<String> DEFAULTS_KEYS = List.of("account", "priorityClass");

  private static final Pattern QUANTITY = Pattern.compile("(-?[0-9]+)([KMGTPE]i)?");

  private final YamlChecks c;

  QueueSection(YamlChecks checks) {
    this.c = checks;
  }

  List<QueueSpec> queues(JsonNode node) {
    var out = new ArrayList<QueueSpec>();
    if (absent(node) || !c.list(node, "queues")) {
      return out;
    }
    for (int i = 0; i < node.size(); i++) {
      JsonNode entry = node.get(i);
      String path = entryPath("queues", i, entry);
      if (!c.mapping(entry, path)) {
        continue;
      }
      c.keys(entry, path, QUEUE_KEYS);
      String name = c.text(entry, "name", path, true);
      String cohort = c.text(entry, "cohort", path, false);
      Map<Resource, ResourceQuota> quotas = quotas(entry.get("quotas"), path + ".quotas");
      PreemptionPolicy preemption = preemption(entry.get("preemption"), path + ".preemption");
      QueueDefaults defaults = defaults(entry.get("defaults"), path + ".defaults");
      if (name != null && quotas != null && preemption != null && defaults != null) {
        out.add(new QueueSpec(name, cohort, quotas, preemption, defaults));
      }
    }
    return out;
  }

  private Map<Resource, ResourceQuota> quotas(JsonNode node, String path) {
    if (absent(node)) {
      c.problem(path, "missing", "add quotas per resource, e.g. quotas: {gpu:H100: {nominal: 8}}");
      return null;
    }
    if (!c.mapping(node, path)) {
      return null;
    }
    var out = new LinkedHashMap<Resource, ResourceQuota>();
    boolean ok = true;
    for (var field : node.properties()) {
      String qp = path + "[" + field.getKey() + "]";
      Resource resource;
      try {
        resource = Resource.parse(field.getKey());
      } catch (IllegalArgumentException e) {
        c.line(qp + ": " + firstLine(e.getMessage()));
        ok = false;
        continue;
      }
      JsonNode quota = field.getValue();
      if (!c.mapping(quota, qp)) {
        ok = false;
        continue;
      }
      c.keys(quota, qp, QUOTA_KEYS);
      boolean memory = resource.kind() == Resource.Kind.MEMORY;
      Long nominal = quantity(quota.get("nominal"), qp + ".nominal", memory, true);
      Long borrowing = quantity(quota.get("borrowingLimit"), qp + ".borrowingLimit", memory, false);
      Long lending = quantity(quota.get("lendingLimit"), qp + ".lendingLimit", memory, false);
      if (nominal == null) {
        ok = false;
        continue;
      }
      out.put(resource, new ResourceQuota(nominal, borrowing, lending));
    }
    return ok ? out : null;
  }

  private PreemptionPolicy preemption(JsonNode node, String path) {
    if (absent(node)) {
      return PreemptionPolicy.NONE;
    }
    if (!c.mapping(node, path)) {
      return null;
    }
    c.keys(node, path, PREEMPTION_KEYS);
    var within =
        c.enumValue(
            node,
            "withinQueue",
            path,
            PreemptionPolicy.WithinQueue.class,
            PreemptionPolicy.WithinQueue.NEVER);
    var reclaim =
        c.enumValue(
            node,
            "reclaimWithinCohort",
            path,
            PreemptionPolicy.ReclaimWithinCohort.class,
            PreemptionPolicy.ReclaimWithinCohort.NEVER);
    PreemptionPolicy.BorrowWithinCohort borrow = PreemptionPolicy.BorrowWithinCohort.NEVER;
    JsonNode b = node.get("borrowWithinCohort");
    String bp = path + ".borrowWithinCohort";
    if (!absent(b)) {
      if (!c.mapping(b, bp)) {
        return null;
      }
      c.keys(b, bp, BORROW_KEYS);
      var policy =
          c.enumValue(
              b,
              "policy",
              bp,
              PreemptionPolicy.BorrowWithinCohort.Policy.class,
              PreemptionPolicy.BorrowWithinCohort.Policy.NEVER);
      Long threshold =
          c.integer(b, "maxPriorityThreshold", bp, false, Integer.MIN_VALUE, Integer.MAX_VALUE);
      if (policy == null || (threshold == null && !absent(b.get("maxPriorityThreshold")))) {
        return null;
      }
      borrow =
          new PreemptionPolicy.BorrowWithinCohort(
              policy, threshold == null ? null : threshold.intValue());
    }
    var fairShare =
        c.enumValue(
            node,
            "fairShare",
            path,
            PreemptionPolicy.FairShare.class,
            PreemptionPolicy.FairShare.NEVER);
    if (within == null || reclaim == null || fairShare == null) {
      return null;
    }
    return new PreemptionPolicy(within, reclaim, borrow, fairShare);
  }

  private QueueDefaults defaults(JsonNode node, String path) {
    if (absent(node)) {
      return QueueDefaults.NONE;
    }
    if (!c.mapping(node, path)) {
      return null;
    }
    c.keys(node, path, DEFAULTS_KEYS);
    String account = c.text(node, "account", path, false);
    String priorityClass = c.text(node, "priorityClass", path, false);
    return new QueueDefaults(account, priorityClass);
  }

  /**
   * A quantity: a whole number, or for memory bytes also with a binary suffix ({@code 16Ti}); null
   * when absent or wrong (the problem is recorded).
   */
  private Long quantity(JsonNode node, String path, boolean memory, boolean required) {
    String fix =
        memory
            ? "write bytes as a whole number, or with a suffix Ki, Mi, Gi, Ti, Pi or Ei (e.g. 16Ti)"
            : "write a whole number";
    if (absent(node)) {
      if (required) {
        c.problem(path, "missing", fix);
      }
      return null;
    }
    if (node.isIntegralNumber()) {
      if (!node.canConvertToLong()) {
        c.problem(path, "too large: " + node.asText(), fix);
        return null;
      }
      return node.longValue();
    }
    if (!node.isTextual()) {
      c.problem(path, "must be a quantity, got " + kind(node), fix);
      return null;
    }
    Matcher m = QUANTITY.matcher(node.asText().strip());
    if (!m.matches()) {
      c.problem(path, "not a quantity: '" + node.asText() + "'", fix);
      return null;
    }
    if (m.group(2) != null && !memory) {
      c.problem(
          path,
          "the suffix " + m.group(2) + " is for memory only, got '" + node.asText() + "'",
          fix);
      return null;
    }
    int shift = m.group(2) == null ? 0 : 10 * (1 + "KMGTPE".indexOf(m.group(2).charAt(0)));
    try {
      return Math.multiplyExact(Long.parseLong(m.group(1)), 1L << shift);
    } catch (NumberFormatException | ArithmeticException e) {
      c.problem(
          path, "too large: '" + node.asText() + "'", "use at most " + Long.MAX_VALUE + " bytes");
      return null;
    }
  }
}

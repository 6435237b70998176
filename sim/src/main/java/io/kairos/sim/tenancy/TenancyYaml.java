package io.kairos.sim.tenancy;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.kairos.core.fairshare.AccountTree;
import io.kairos.core.sched.preempt.ProtectionPolicy;
import io.kairos.core.tenancy.CohortSpec;
import io.kairos.core.tenancy.PreemptionPolicy;
import io.kairos.core.tenancy.PriorityClass;
import io.kairos.core.tenancy.QueueDefaults;
import io.kairos.core.tenancy.QueueSpec;
import io.kairos.core.tenancy.Resource;
import io.kairos.core.tenancy.ResourceQuota;
import io.kairos.core.tenancy.TenancyConfig;
import io.kairos.core.tenancy.Tenants;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a tenancy file (see docs/tenancy.md and docs/examples/tenancy.yaml) into a {@link Tenancy}.
 *
 * <p>Every problem is reported at once, as one {@link InvalidConfig} whose message has one line per
 * problem: {@code file: key.path: problem (fix: ...)}. The reader checks the shape of the document
 * (known keys, types, quantities, durations, that queue default accounts exist); the rules about
 * the values themselves are the core's ({@link TenancyConfig}, {@link AccountTree}), whose messages
 * are passed through with the file name in front. Key paths name list entries by their {@code name}
 * where they have one ({@code queues[vision].quotas[gpu:H100].nominal}, as the core does), else by
 * position ({@code queues[#0]}).
 *
 * <p>Deterministic, no I/O besides {@link #read}. Shape problems stop before the core validators
 * run, so a misspelt key does not also produce a cascade of core messages.
 */
public final class TenancyYaml {
  /** The default fair-share half-life: 7 days, as Slurm's PriorityDecayHalfLife. */
  public static final long DEFAULT_HALF_LIFE_SEC = 7L * 24 * 3600;

  private static final List<String> ROOT_KEYS =
      List.of("fairShare", "priorityClasses", "cohorts", "queues", "accounts", "scheduling");
  private static final List<String> FAIR_SHARE_KEYS = List.of("halfLife");
  private static final List<String> CLASS_KEYS = List.of("name", "value", "preemptible");
  private static final List<String> COHORT_KEYS = List.of("name");
  private static final List<String> QUEUE_KEYS =
      List.of("name", "cohort", "quotas", "preemption", "defaults");
  private static final List<String> QUOTA_KEYS =
      List.of("nominal", "borrowingLimit", "lendingLimit");
  private static final List<String> PREEMPTION_KEYS =
      List.of("withinQueue", "reclaimWithinCohort", "borrowWithinCohort", "fairShare");
  private static final List<String> SCHEDULING_KEYS =
      List.of("preemptionGrace", "protection", "starvation");
  private static final List<String> PROTECTION_KEYS =
      List.of("minRuntime", "window", "maxPreemptions", "protectFor");
  private static final List<String> STARVATION_KEYS = List.of("minGpus", "maxWait");
  private static final List<String> BORROW_KEYS = List.of("policy", "maxPriorityThreshold");
  private static final List<String> DEFAULTS_KEYS = List.of("account", "priorityClass");
  private static final List<String> ACCOUNT_KEYS = List.of("name", "parent", "shares");

  private static final Pattern QUANTITY = Pattern.compile("(-?[0-9]+)([KMGTPE]i)?");
  private static final Pattern DURATION = Pattern.compile("([0-9]+)([smhd])");

  private TenancyYaml() {}

  /**
   * Every problem found in a tenancy file, one per line: {@code file: key.path: problem (fix:
   * ...)}.
   */
  public static final class InvalidConfig extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    private final transient List<String> problems;

    InvalidConfig(List<String> problems) {
      super(String.join("\n", problems));
      this.problems = List.copyOf(problems);
    }

    /** The problems, one line each, in document order. */
    public List<String> problems() {
      return problems;
    }
  }

  /**
   * Reads and checks a tenancy file; its name in messages is the path as given.
   *
   * @throws InvalidConfig if it cannot be read or is invalid
   */
  public static Tenancy read(Path file) {
    String text;
    try {
      text = Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException | RuntimeException e) {
      throw new InvalidConfig(
          List.of(
              file
                  + ": cannot read the file: "
                  + e.getClass().getSimpleName()
                  + (e.getMessage() == null ? "" : " " + e.getMessage())
                  + " (fix: check the path and that it is a readable UTF-8 text file)"));
    }
    return parse(text, file.toString());
  }

  /**
   * Parses and checks a tenancy document.
   *
   * @param sourceName how messages name the document, e.g. the file name
   * @throws InvalidConfig if it is invalid
   */
  public static Tenancy parse(String text, String sourceName) {
    Objects.requireNonNull(text, "text");
    Objects.requireNonNull(sourceName, "sourceName");
    JsonNode root;
    try {
      var mapper = new ObjectMapper(new YAMLFactory());
      mapper.enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
      root = mapper.readTree(text);
    } catch (JacksonException e) {
      throw new InvalidConfig(List.of(syntaxError(sourceName, e)));
    } catch (RuntimeException e) {
      // SnakeYAML limits (nesting, aliases, size) surface as other exceptions.
      throw new InvalidConfig(
          List.of(
              sourceName
                  + ": not valid YAML: "
                  + firstLine(e.getMessage())
                  + " (fix: correct the YAML syntax)"));
    }
    return new Reader(sourceName).document(root);
  }

  private static String syntaxError(String source, JacksonException e) {
    JsonLocation at = e.getLocation();
    String where =
        at != null && at.getLineNr() > 0
            ? "line " + at.getLineNr() + ", column " + at.getColumnNr()
            : "document";
    return source
        + ": "
        + where
        + ": not valid YAML: "
        + firstLine(e.getOriginalMessage())
        + " (fix: correct the YAML syntax there)";
  }

  private static String firstLine(String message) {
    if (message == null || message.isBlank()) {
      return "unreadable";
    }
    return message.strip().lines().findFirst().orElse("").strip();
  }

  /** One pass over the tree; collects problems, then builds the core values. */
  private static final class Reader {
    private final String source;
    private final List<String> problems = new ArrayList<>();

    Reader(String source) {
      this.source = source;
    }

    Tenancy document(JsonNode root) {
      if (root == null || root.isMissingNode() || root.isNull()) {
        root = new ObjectMapper().createObjectNode();
      }
      if (!root.isObject()) {
        problem(
            "(document)",
            "must be a mapping with keys " + String.join(", ", ROOT_KEYS) + ", got " + kind(root),
            "start from docs/examples/tenancy.yaml");
        throw new InvalidConfig(problems);
      }
      keys(root, "", ROOT_KEYS);
      long halfLife = fairShare(root.get("fairShare"));
      List<PriorityClass> classes = priorityClasses(root.get("priorityClasses"));
      List<CohortSpec> cohorts = cohorts(root.get("cohorts"));
      List<QueueSpec> queues = queues(root.get("queues"));
      List<AccountTree.Account> accounts = accounts(root.get("accounts"));
      Tenants.Settings settings = scheduling(root.get("scheduling"));
      defaultAccounts(queues, accounts);
      if (!problems.isEmpty()) {
        throw new InvalidConfig(problems);
      }

      TenancyConfig config = null;
      try {
        config = new TenancyConfig(classes, cohorts, queues);
      } catch (IllegalArgumentException e) {
        for (String line : lines(e.getMessage())) {
          if (!line.startsWith("invalid tenancy configuration")) {
            problems.add(source + ": " + line);
          }
        }
      }
      AccountTree tree = null;
      try {
        tree = AccountTree.of(accounts);
      } catch (IllegalArgumentException e) {
        for (String line : lines(e.getMessage())) {
          problems.add(source + ": accounts: " + line);
        }
      }
      if (!problems.isEmpty() || config == null || tree == null) {
        throw new InvalidConfig(problems);
      }
      return new Tenancy(config, tree, halfLife, settings);
    }

    // ---- sections ------------------------------------------------------------------------

    private long fairShare(JsonNode node) {
      if (absent(node)) {
        return DEFAULT_HALF_LIFE_SEC;
      }
      if (!mapping(node, "fairShare")) {
        return DEFAULT_HALF_LIFE_SEC;
      }
      keys(node, "fairShare", FAIR_SHARE_KEYS);
      JsonNode value = node.get("halfLife");
      if (absent(value)) {
        return DEFAULT_HALF_LIFE_SEC;
      }
      Long seconds = duration(value, "fairShare.halfLife", false);
      return seconds == null ? DEFAULT_HALF_LIFE_SEC : seconds;
    }

    /**
     * The {@code scheduling} block; every key optional, defaults {@link Tenants.Settings#DEFAULT}.
     */
    private Tenants.Settings scheduling(JsonNode node) {
      var d = Tenants.Settings.DEFAULT;
      if (absent(node) || !mapping(node, "scheduling")) {
        return d;
      }
      keys(node, "scheduling", SCHEDULING_KEYS);
      long grace =
          orElse(
              duration(node.get("preemptionGrace"), "scheduling.preemptionGrace", true),
              d.graceSec());
      ProtectionPolicy p = d.protection();
      JsonNode pn = node.get("protection");
      String pp = "scheduling.protection";
      if (!absent(pn) && mapping(pn, pp)) {
        keys(pn, pp, PROTECTION_KEYS);
        long minRuntime =
            orElse(duration(pn.get("minRuntime"), pp + ".minRuntime", true), p.graceSec());
        long window = orElse(duration(pn.get("window"), pp + ".window", true), p.windowSec());
        Long max = integer(pn, "maxPreemptions", pp, false, 1, Integer.MAX_VALUE);
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
      if (!absent(sn) && mapping(sn, sp)) {
        keys(sn, sp, STARVATION_KEYS);
        Long gpus = integer(sn, "minGpus", sp, false, 0, Integer.MAX_VALUE);
        minGpus = gpus == null ? minGpus : gpus.intValue();
        maxWait = orElse(duration(sn.get("maxWait"), sp + ".maxWait", true), maxWait);
      }
      return new Tenants.Settings(p, grace, minGpus, maxWait);
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
        problem(path, "must be a duration with a unit, got " + kind(value), fix);
        return null;
      }
      Matcher m = DURATION.matcher(value.asText().strip());
      if (!m.matches()) {
        problem(path, "not a duration: '" + value.asText() + "'", fix);
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
          problem(path, "must be > 0, got '" + value.asText() + "'", fix);
          return null;
        }
        if (seconds > (1L << 40)) {
          problem(path, "too large: '" + value.asText() + "'", fix);
          return null;
        }
        return seconds;
      } catch (NumberFormatException | ArithmeticException e) {
        problem(path, "too large: '" + value.asText() + "'", fix);
        return null;
      }
    }

    private List<PriorityClass> priorityClasses(JsonNode node) {
      var out = new ArrayList<PriorityClass>();
      if (absent(node) || !list(node, "priorityClasses")) {
        return out;
      }
      for (int i = 0; i < node.size(); i++) {
        JsonNode entry = node.get(i);
        String path = entryPath("priorityClasses", i, entry);
        if (!mapping(entry, path)) {
          continue;
        }
        keys(entry, path, CLASS_KEYS);
        String name = text(entry, "name", path, true);
        Long value = integer(entry, "value", path, true, Integer.MIN_VALUE, Integer.MAX_VALUE);
        Boolean preemptible = bool(entry, "preemptible", path);
        if (name != null && value != null) {
          out.add(new PriorityClass(name, value.intValue(), preemptible != null && preemptible));
        }
      }
      return out;
    }

    private List<CohortSpec> cohorts(JsonNode node) {
      var out = new ArrayList<CohortSpec>();
      if (absent(node) || !list(node, "cohorts")) {
        return out;
      }
      for (int i = 0; i < node.size(); i++) {
        JsonNode entry = node.get(i);
        String path = entryPath("cohorts", i, entry);
        if (entry.isTextual()) {
          out.add(new CohortSpec(entry.asText()));
        } else if (entry.isObject()) {
          keys(entry, path, COHORT_KEYS);
          String name = text(entry, "name", path, true);
          if (name != null) {
            out.add(new CohortSpec(name));
          }
        } else {
          problem(
              path,
              "must be a cohort name or {name: ...}, got " + kind(entry),
              "write the name, e.g. - ml");
        }
      }
      return out;
    }

    private List<QueueSpec> queues(JsonNode node) {
      var out = new ArrayList<QueueSpec>();
      if (absent(node) || !list(node, "queues")) {
        return out;
      }
      for (int i = 0; i < node.size(); i++) {
        JsonNode entry = node.get(i);
        String path = entryPath("queues", i, entry);
        if (!mapping(entry, path)) {
          continue;
        }
        keys(entry, path, QUEUE_KEYS);
        String name = text(entry, "name", path, true);
        String cohort = text(entry, "cohort", path, false);
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
        problem(path, "missing", "add quotas per resource, e.g. quotas: {gpu:H100: {nominal: 8}}");
        return null;
      }
      if (!mapping(node, path)) {
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
          problems.add(source + ": " + qp + ": " + firstLine(e.getMessage()));
          ok = false;
          continue;
        }
        JsonNode quota = field.getValue();
        if (!mapping(quota, qp)) {
          ok = false;
          continue;
        }
        keys(quota, qp, QUOTA_KEYS);
        boolean memory = resource.kind() == Resource.Kind.MEMORY;
        Long nominal = quantity(quota.get("nominal"), qp + ".nominal", memory, true);
        Long borrowing =
            quantity(quota.get("borrowingLimit"), qp + ".borrowingLimit", memory, false);
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
      if (!mapping(node, path)) {
        return null;
      }
      keys(node, path, PREEMPTION_KEYS);
      var within =
          enumValue(
              node,
              "withinQueue",
              path,
              PreemptionPolicy.WithinQueue.class,
              PreemptionPolicy.WithinQueue.NEVER);
      var reclaim =
          enumValue(
              node,
              "reclaimWithinCohort",
              path,
              PreemptionPolicy.ReclaimWithinCohort.class,
              PreemptionPolicy.ReclaimWithinCohort.NEVER);
      PreemptionPolicy.BorrowWithinCohort borrow = PreemptionPolicy.BorrowWithinCohort.NEVER;
      JsonNode b = node.get("borrowWithinCohort");
      String bp = path + ".borrowWithinCohort";
      if (!absent(b)) {
        if (!mapping(b, bp)) {
          return null;
        }
        keys(b, bp, BORROW_KEYS);
        var policy =
            enumValue(
                b,
                "policy",
                bp,
                PreemptionPolicy.BorrowWithinCohort.Policy.class,
                PreemptionPolicy.BorrowWithinCohort.Policy.NEVER);
        Long threshold =
            integer(b, "maxPriorityThreshold", bp, false, Integer.MIN_VALUE, Integer.MAX_VALUE);
        if (policy == null || (threshold == null && !absent(b.get("maxPriorityThreshold")))) {
          return null;
        }
        borrow =
            new PreemptionPolicy.BorrowWithinCohort(
                policy, threshold == null ? null : threshold.intValue());
      }
      var fairShare =
          enumValue(
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
      if (!mapping(node, path)) {
        return null;
      }
      keys(node, path, DEFAULTS_KEYS);
      String account = text(node, "account", path, false);
      String priorityClass = text(node, "priorityClass", path, false);
      return new QueueDefaults(account, priorityClass);
    }

    private List<AccountTree.Account> accounts(JsonNode node) {
      var out = new ArrayList<AccountTree.Account>();
      if (absent(node) || !list(node, "accounts")) {
        return out;
      }
      for (int i = 0; i < node.size(); i++) {
        JsonNode entry = node.get(i);
        String path = entryPath("accounts", i, entry);
        if (!mapping(entry, path)) {
          continue;
        }
        keys(entry, path, ACCOUNT_KEYS);
        String name = text(entry, "name", path, true);
        String parent = text(entry, "parent", path, false);
        Long shares = integer(entry, "shares", path, false, Long.MIN_VALUE, Long.MAX_VALUE);
        boolean sharesOk = shares != null || absent(entry.get("shares"));
        if (name != null && sharesOk) {
          out.add(
              new AccountTree.Account(
                  name, parent == null ? AccountTree.ROOT : parent, shares == null ? 1 : shares));
        }
      }
      return out;
    }

    /** A queue's default account must be an account of the tree (fair share charges it). */
    private void defaultAccounts(List<QueueSpec> queues, List<AccountTree.Account> accounts) {
      Set<String> names = new HashSet<>();
      for (var a : accounts) {
        names.add(a.name());
      }
      for (QueueSpec q : queues) {
        String account = q.defaults().account();
        if (account != null && !account.isBlank() && !names.contains(account)) {
          String closest = closest(account, names.stream().sorted().toList());
          problem(
              "queues[" + q.name() + "].defaults.account",
              "unknown account '"
                  + account
                  + "'"
                  + (closest == null ? "" : "; did you mean '" + closest + "'?"),
              "declare it under accounts, or correct the name");
        }
      }
    }

    // ---- values --------------------------------------------------------------------------

    private Long quantity(JsonNode node, String path, boolean memory, boolean required) {
      String fix =
          memory
              ? "write bytes as a whole number, or with a suffix Ki, Mi, Gi, Ti, Pi or Ei (e.g. 16Ti)"
              : "write a whole number";
      if (absent(node)) {
        if (required) {
          problem(path, "missing", fix);
        }
        return null;
      }
      if (node.isIntegralNumber()) {
        if (!node.canConvertToLong()) {
          problem(path, "too large: " + node.asText(), fix);
          return null;
        }
        return node.longValue();
      }
      if (!node.isTextual()) {
        problem(path, "must be a quantity, got " + kind(node), fix);
        return null;
      }
      Matcher m = QUANTITY.matcher(node.asText().strip());
      if (!m.matches()) {
        problem(path, "not a quantity: '" + node.asText() + "'", fix);
        return null;
      }
      if (m.group(2) != null && !memory) {
        problem(
            path,
            "the suffix " + m.group(2) + " is for memory only, got '" + node.asText() + "'",
            fix);
        return null;
      }
      int shift = m.group(2) == null ? 0 : 10 * (1 + "KMGTPE".indexOf(m.group(2).charAt(0)));
      try {
        return Math.multiplyExact(Long.parseLong(m.group(1)), 1L << shift);
      } catch (NumberFormatException | ArithmeticException e) {
        problem(
            path, "too large: '" + node.asText() + "'", "use at most " + Long.MAX_VALUE + " bytes");
        return null;
      }
    }

    private String text(JsonNode parent, String key, String path, boolean required) {
      JsonNode node = parent.get(key);
      String kp = path + "." + key;
      if (absent(node)) {
        if (required) {
          problem(kp, "missing", "add " + key + ": ...");
        }
        return null;
      }
      if (!node.isTextual()) {
        problem(
            kp,
            "must be text, got " + kind(node),
            "write a name, quoted if it looks like a number");
        return null;
      }
      return node.asText();
    }

    private Long integer(
        JsonNode parent, String key, String path, boolean required, long min, long max) {
      JsonNode node = parent.get(key);
      String kp = path + "." + key;
      String fix = "write a whole number between " + min + " and " + max;
      if (absent(node)) {
        if (required) {
          problem(kp, "missing", fix);
        }
        return null;
      }
      if (!node.isIntegralNumber()) {
        problem(kp, "must be a whole number, got " + kind(node), fix);
        return null;
      }
      if (!node.canConvertToLong() || node.longValue() < min || node.longValue() > max) {
        problem(kp, "out of range: " + node.asText(), fix);
        return null;
      }
      return node.longValue();
    }

    private Boolean bool(JsonNode parent, String key, String path) {
      JsonNode node = parent.get(key);
      if (absent(node)) {
        return null;
      }
      if (!node.isBoolean()) {
        problem(
            path + "." + key, "must be true or false, got " + kind(node), "write true or false");
        return null;
      }
      return node.booleanValue();
    }

    private <E extends Enum<E>> E enumValue(
        JsonNode parent, String key, String path, Class<E> type, E absentValue) {
      JsonNode node = parent.get(key);
      if (absent(node)) {
        return absentValue;
      }
      List<String> names = Arrays.stream(type.getEnumConstants()).map(Enum::name).toList();
      String kp = path + "." + key;
      String fix = "use one of " + String.join(", ", names);
      if (!node.isTextual()) {
        problem(kp, "must be one of " + names + ", got " + kind(node), fix);
        return null;
      }
      // Kueue's spelling is accepted too: LowerPriority, Any, Never.
      String asConstant =
          node.asText().replaceAll("([a-z])([A-Z])", "$1_$2").toUpperCase(java.util.Locale.ROOT);
      for (E constant : type.getEnumConstants()) {
        if (constant.name().equals(node.asText()) || constant.name().equals(asConstant)) {
          return constant;
        }
      }
      String closest = closest(node.asText(), names);
      problem(
          kp,
          "unknown value '"
              + node.asText()
              + "'"
              + (closest == null ? "" : "; did you mean '" + closest + "'?"),
          fix);
      return null;
    }

    // ---- shape ---------------------------------------------------------------------------

    private void keys(JsonNode map, String path, List<String> allowed) {
      for (var it = map.fieldNames(); it.hasNext(); ) {
        String key = it.next();
        if (allowed.contains(key)) {
          continue;
        }
        String kp = path.isEmpty() ? key : path + "." + key;
        String closest = closest(key, allowed);
        if (closest != null) {
          problem(
              kp, "unknown key; did you mean '" + closest + "'?", "rename it to '" + closest + "'");
        } else {
          problem(kp, "unknown key", "remove it, or use one of " + String.join(", ", allowed));
        }
      }
    }

    private boolean mapping(JsonNode node, String path) {
      if (node.isObject()) {
        return true;
      }
      problem(
          path,
          "must be a mapping (key: value), got " + kind(node),
          "see docs/examples/tenancy.yaml");
      return false;
    }

    private boolean list(JsonNode node, String path) {
      if (node.isArray()) {
        return true;
      }
      problem(path, "must be a list (- ...), got " + kind(node), "see docs/examples/tenancy.yaml");
      return false;
    }

    private static String entryPath(String list, int i, JsonNode entry) {
      JsonNode name = entry.isObject() ? entry.get("name") : null;
      if (name != null && name.isTextual() && !name.asText().isBlank()) {
        return list + "[" + name.asText() + "]";
      }
      return list + "[#" + i + "]";
    }

    private void problem(String path, String what, String fix) {
      problems.add(source + ": " + path + ": " + what + " (fix: " + fix + ")");
    }

    private static boolean absent(JsonNode node) {
      return node == null || node.isNull() || node.isMissingNode();
    }

    private static String kind(JsonNode node) {
      if (node.isObject()) {
        return "a mapping";
      }
      if (node.isArray()) {
        return "a list";
      }
      if (node.isBoolean()) {
        return "a boolean";
      }
      if (node.isNumber()) {
        return "the number " + node.asText();
      }
      if (node.isTextual()) {
        String t = node.asText();
        return "'" + (t.length() > 40 ? t.substring(0, 40) + "..." : t) + "'";
      }
      return "nothing";
    }

    private static List<String> lines(String message) {
      return message == null
          ? List.of("invalid")
          : message.lines().filter(l -> !l.isBlank()).toList();
    }
  }

  /** The candidate closest by edit distance, if close enough to be a likely typo; else null. */
  static String closest(String word, List<String> candidates) {
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (String c : candidates) {
      int d =
          distance(word.toLowerCase(java.util.Locale.ROOT), c.toLowerCase(java.util.Locale.ROOT));
      if (d < bestDistance) {
        best = c;
        bestDistance = d;
      }
    }
    int allowed = Math.max(2, word.length() / 3);
    return bestDistance <= allowed ? best : null;
  }

  private static int distance(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int sub = prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
        cur[j] = Math.min(sub, Math.min(prev[j] + 1, cur[j - 1] + 1));
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }
}

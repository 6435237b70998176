package io.kairos.config;

import static io.kairos.config.YamlChecks.absent;
import static io.kairos.config.YamlChecks.entryPath;
import static io.kairos.config.YamlChecks.firstLine;
import static io.kairos.config.YamlChecks.kind;
import static io.kairos.config.YamlChecks.lines;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.kairos.core.fairshare.AccountTree;
import io.kairos.core.tenancy.CohortSpec;
import io.kairos.core.tenancy.PriorityClass;
import io.kairos.core.tenancy.QueueSpec;
import io.kairos.core.tenancy.TenancyConfig;
import io.kairos.core.tenancy.Tenants;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

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
 * run, so a misspelt key does not also produce a cascade of core messages. The sections are read by
 * {@link QueueSection} (queues, their quotas and preemption) and {@link SchedulingSection} (the
 * half-life and the scheduling settings); the short lists (priority classes, cohorts, accounts)
 * here.
 */
public final class TenancyYaml {
  /** The default fair-share half-life: 7 days, as Slurm's PriorityDecayHalfLife. */
  public static final long DEFAULT_HALF_LIFE_SEC = 7L * 24 * 3600;

  private static final List<String> ROOT_KEYS =
      List.of("fairShare", "priorityClasses", "cohorts", "queues", "accounts", "scheduling");
  private static final List<String> CLASS_KEYS = List.of("name", "value", "preemptible");
  private static final List<String> COHORT_KEYS = List.of("name");
  private static final List<String> ACCOUNT_KEYS = List.of("name", "parent", "shares");

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
      root = StrictYaml.readTree(text, StrictYaml.Syntax.YAML);
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
    return document(new YamlChecks(sourceName), root, text);
  }

  private static String syntaxError(String source, JacksonException e) {
    String where = StrictYaml.location(e);
    return source
        + ": "
        + (where == null ? "document" : where)
        + ": not valid YAML: "
        + firstLine(e.getOriginalMessage())
        + " (fix: correct the YAML syntax there)";
  }

  /** One pass over the tree; collects problems, then builds the core values. */
  private static Tenancy document(YamlChecks c, JsonNode root, String text) {
    if (root == null || root.isMissingNode() || root.isNull()) {
      root = JsonNodeFactory.instance.objectNode();
    }
    if (!root.isObject()) {
      c.problem(
          "(document)",
          "must be a mapping with keys " + String.join(", ", ROOT_KEYS) + ", got " + kind(root),
          "start from docs/examples/tenancy.yaml");
      throw new InvalidConfig(c.problems());
    }
    c.keys(root, "", ROOT_KEYS);
    var times = new SchedulingSection(c);
    long halfLife = times.fairShare(root.get("fairShare"));
    List<PriorityClass> classes = priorityClasses(c, root.get("priorityClasses"));
    List<CohortSpec> cohorts = cohorts(c, root.get("cohorts"));
    List<QueueSpec> queues = new QueueSection(c).queues(root.get("queues"));
    List<AccountTree.Account> accounts = accounts(c, root.get("accounts"));
    Tenants.Settings settings = times.scheduling(root.get("scheduling"));
    var migration = times.migration(root.get("scheduling"));
    defaultAccounts(c, queues, accounts);
    if (!c.ok()) {
      throw new InvalidConfig(c.problems());
    }

    TenancyConfig config = null;
    try {
      config = new TenancyConfig(classes, cohorts, queues);
    } catch (IllegalArgumentException e) {
      for (String line : lines(e.getMessage())) {
        if (!line.startsWith("invalid tenancy configuration")) {
          c.line(line);
        }
      }
    }
    AccountTree tree = null;
    try {
      tree = AccountTree.of(accounts);
    } catch (IllegalArgumentException e) {
      for (String line : lines(e.getMessage())) {
        c.line("accounts: " + line);
      }
    }
    if (!c.ok() || config == null || tree == null) {
      throw new InvalidConfig(c.problems());
    }
    return new Tenancy(config, tree, halfLife, settings, text, migration);
  }

  private static List<PriorityClass> priorityClasses(YamlChecks c, JsonNode node) {
    var out = new ArrayList<PriorityClass>();
    if (absent(node) || !c.list(node, "priorityClasses")) {
      return out;
    }
    for (int i = 0; i < node.size(); i++) {
      JsonNode entry = node.get(i);
      String path = entryPath("priorityClasses", i, entry);
      if (!c.mapping(entry, path)) {
        continue;
      }
      c.keys(entry, path, CLASS_KEYS);
      String name = c.text(entry, "name", path, true);
      Long value = c.integer(entry, "value", path, true, Integer.MIN_VALUE, Integer.MAX_VALUE);
      Boolean preemptible = c.bool(entry, "preemptible", path);
      if (name != null && value != null) {
        out.add(new PriorityClass(name, value.intValue(), preemptible != null && preemptible));
      }
    }
    return out;
  }

  private static List<CohortSpec> cohorts(YamlChecks c, JsonNode node) {
    var out = new ArrayList<CohortSpec>();
    if (absent(node) || !c.list(node, "cohorts")) {
      return out;
    }
    for (int i = 0; i < node.size(); i++) {
      JsonNode entry = node.get(i);
      String path = entryPath("cohorts", i, entry);
      if (entry.isTextual()) {
        out.add(new CohortSpec(entry.asText()));
      } else if (entry.isObject()) {
        c.keys(entry, path, COHORT_KEYS);
        String name = c.text(entry, "name", path, true);
        if (name != null) {
          out.add(new CohortSpec(name));
        }
      } else {
        c.problem(
            path,
            "must be a cohort name or {name: ...}, got " + kind(entry),
            "write the name, e.g. - ml");
      }
    }
    return out;
  }

  private static List<AccountTree.Account> accounts(YamlChecks c, JsonNode node) {
    var out = new ArrayList<AccountTree.Account>();
    if (absent(node) || !c.list(node, "accounts")) {
      return out;
    }
    for (int i = 0; i < node.size(); i++) {
      JsonNode entry = node.get(i);
      String path = entryPath("accounts", i, entry);
      if (!c.mapping(entry, path)) {
        continue;
      }
      c.keys(entry, path, ACCOUNT_KEYS);
      String name = c.text(entry, "name", path, true);
      String parent = c.text(entry, "parent", path, false);
      Long shares = c.integer(entry, "shares", path, false, Long.MIN_VALUE, Long.MAX_VALUE);
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
  private static void defaultAccounts(
      YamlChecks c, List<QueueSpec> queues, List<AccountTree.Account> accounts) {
    Set<String> names = new HashSet<>();
    for (var a : accounts) {
      names.add(a.name());
    }
    for (QueueSpec q : queues) {
      String account = q.defaults().account();
      if (account != null && !account.isBlank() && !names.contains(account)) {
        String closest = DidYouMean.closest(account, names.stream().sorted().toList());
        c.problem(
            "queues[" + q.name() + "].defaults.account",
            "unknown account '"
                + account
                + "'"
                + (closest == null ? "" : "; did you mean '" + closest + "'?"),
            "declare it under accounts, or correct the name");
      }
    }
  }
}

package io.kairos.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

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
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class TenancyYamlTest {
  private static final Path EXAMPLE = Path.of("..", "docs", "examples", "tenancy.yaml");
  private static final String FILE = "tenancy.yaml";

  private static String example() throws IOException {
    return Files.readString(EXAMPLE, StandardCharsets.UTF_8);
  }

  @Test
  void kueueSpellingOfPreemptionValuesIsAccepted() {
    Tenancy t =
        TenancyYaml.parse(
            """
            cohorts: [c]
            queues:
              - name: q
                cohort: c
                quotas: {gpu:H100: {nominal: 8}}
                preemption:
                  withinQueue: LowerPriority
                  reclaimWithinCohort: Any
                  borrowWithinCohort: {policy: LowerPriority}
                  fairShare: OverServed
            """,
            FILE);
    assertThat(t.config().queues().getFirst().preemption())
        .isEqualTo(
            new PreemptionPolicy(
                PreemptionPolicy.WithinQueue.LOWER_PRIORITY,
                PreemptionPolicy.ReclaimWithinCohort.ANY,
                new PreemptionPolicy.BorrowWithinCohort(
                    PreemptionPolicy.BorrowWithinCohort.Policy.LOWER_PRIORITY, null),
                PreemptionPolicy.FairShare.OVER_SERVED));
  }

  @Test
  void theExampleParsesToTheExpectedRecords() {
    Tenancy t = TenancyYaml.read(EXAMPLE);

    var expected =
        new TenancyConfig(
            List.of(
                new PriorityClass("production", 1000, false),
                new PriorityClass("research", 100, true),
                new PriorityClass("best-effort", 0, true)),
            List.of(new CohortSpec("ml")),
            List.of(
                new QueueSpec(
                    "vision",
                    "ml",
                    Map.of(
                        Resource.gpu("H100"),
                        new ResourceQuota(64, 32L, 16L),
                        Resource.CPUS,
                        ResourceQuota.of(2048),
                        Resource.MEMORY_BYTES,
                        ResourceQuota.of(16L << 40)),
                    new PreemptionPolicy(
                        PreemptionPolicy.WithinQueue.LOWER_PRIORITY,
                        PreemptionPolicy.ReclaimWithinCohort.ANY,
                        PreemptionPolicy.BorrowWithinCohort.NEVER,
                        PreemptionPolicy.FairShare.OVER_SERVED),
                    new QueueDefaults("vision", "research"))));
    assertThat(t.config()).isEqualTo(expected);
    assertThat(t.accounts())
        .isEqualTo(
            AccountTree.of(
                List.of(
                    new AccountTree.Account("research-org", AccountTree.ROOT, 3),
                    new AccountTree.Account("vision", "research-org", 2),
                    new AccountTree.Account("alice", "vision", 1))));
    assertThat(t.halfLifeSec()).isEqualTo(7L * 24 * 3600);
    assertThat(t.settings())
        .isEqualTo(
            new Tenants.Settings(new ProtectionPolicy(30, 3600, 3, 3600), 120, 64, 6 * 3600));
  }

  @Test
  void schedulingKeysOverrideTheirDefaultsOneByOne() {
    Tenancy t =
        TenancyYaml.parse(
            """
            scheduling:
              preemptionGrace: 0s
              protection: {minRuntime: 5m, maxPreemptions: 1}
              starvation: {minGpus: 0}
            """,
            FILE);
    var d = Tenants.Settings.DEFAULT;
    assertThat(t.settings())
        .isEqualTo(
            new Tenants.Settings(
                new ProtectionPolicy(
                    300,
                    d.protection().windowSec(),
                    1,
                    d.protection().protectAfterPreemptionsSec()),
                0,
                0,
                d.starvationMaxWaitSec()));
    assertThat(t.settings().starvationGuard()).isFalse();
  }

  @Test
  void defaultsApplyToAnEmptyDocumentAndOmittedKeys() {
    Tenancy empty = TenancyYaml.parse("", FILE);
    assertThat(empty.config().queues()).isEmpty();
    assertThat(empty.accounts().size()).isZero();
    assertThat(empty.halfLifeSec()).isEqualTo(TenancyYaml.DEFAULT_HALF_LIFE_SEC);

    Tenancy small =
        TenancyYaml.parse(
            """
            fairShare: {halfLife: 12h}
            queues:
              - {name: q, quotas: {gpu:A100: {nominal: 8}, memory: {nominal: 512Gi}}}
            accounts: [{name: a}]
            """,
            FILE);
    QueueSpec q = small.config().queues().getFirst();
    assertThat(q.cohort()).isNull();
    assertThat(q.preemption()).isEqualTo(PreemptionPolicy.NONE);
    assertThat(q.defaults()).isEqualTo(QueueDefaults.NONE);
    assertThat(q.quotas()).containsEntry(Resource.MEMORY_BYTES, ResourceQuota.of(512L << 30));
    assertThat(small.accounts().shares(small.accounts().id("a"))).isEqualTo(1);
    assertThat(small.halfLifeSec()).isEqualTo(12 * 3600);
    assertThat(small.settings()).isEqualTo(Tenants.Settings.DEFAULT);
    assertThat(empty.settings()).isEqualTo(Tenants.Settings.DEFAULT);
  }

  static Stream<Arguments> errors() {
    return Stream.of(
        Arguments.of(
            "unknown queue cohort",
            "    cohort: ml ",
            "    cohort: nlp ",
            "tenancy.yaml: queues[vision].cohort: unknown cohort 'nlp' (fix: declare it"),
        Arguments.of(
            "cycle in the account tree",
            "{name: research-org, shares: 3}",
            "{name: research-org, parent: alice, shares: 3}",
            "tenancy.yaml: accounts: account 'alice' is on or under a parent cycle"
                + " (alice -> vision -> research-org -> alice)"),
        Arguments.of(
            "negative quota",
            "nominal: 64,",
            "nominal: -64,",
            "tenancy.yaml: queues[vision].quotas[gpu:H100].nominal: must be >= 0, got -64"),
        Arguments.of(
            "borrowing limit without a cohort",
            "    cohort: ml                # must be declared under cohorts\n",
            "",
            "tenancy.yaml: queues[vision].quotas[gpu:H100].borrowingLimit: set on a queue without"
                + " a cohort"),
        Arguments.of(
            "unknown key with suggestion",
            "    quotas: ",
            "    quota: ",
            "tenancy.yaml: queues[vision].quota: unknown key; did you mean 'quotas'?"
                + " (fix: rename it to 'quotas')"),
        Arguments.of(
            "unknown top-level key",
            "cohorts: [ml]",
            "cohort: [ml]",
            "tenancy.yaml: cohort: unknown key; did you mean 'cohorts'?"),
        Arguments.of(
            "bad quantity",
            "16Ti",
            "16TB",
            "tenancy.yaml: queues[vision].quotas[memory].nominal: not a quantity: '16TB' (fix:"),
        Arguments.of(
            "memory suffix on GPUs",
            "nominal: 64,",
            "nominal: 64Gi,",
            "tenancy.yaml: queues[vision].quotas[gpu:H100].nominal: the suffix Gi is for memory"),
        Arguments.of(
            "bad half-life",
            "halfLife: 7d",
            "halfLife: 7w",
            "tenancy.yaml: fairShare.halfLife: not a duration: '7w' (fix: write a positive"),
        Arguments.of(
            "zero half-life",
            "halfLife: 7d",
            "halfLife: 0s",
            "tenancy.yaml: fairShare.halfLife: must be > 0"),
        Arguments.of(
            "default account missing",
            "account: vision,",
            "account: vison,",
            "tenancy.yaml: queues[vision].defaults.account: unknown account 'vison'; did you mean"
                + " 'vision'? (fix: declare it under accounts"),
        Arguments.of(
            "wrong type",
            "value: 1000,",
            "value: high,",
            "tenancy.yaml: priorityClasses[production].value: must be a whole number, got 'high'"),
        Arguments.of(
            "bad enum with suggestion",
            "reclaimWithinCohort: ANY",
            "reclaimWithinCohort: LOWER_PRIORTY",
            "tenancy.yaml: queues[vision].preemption.reclaimWithinCohort: unknown value"
                + " 'LOWER_PRIORTY'; did you mean 'LOWER_PRIORITY'?"),
        Arguments.of(
            "bad fair-share preemption",
            "fairShare: OVER_SERVED}",
            "fairShare: OVERSERVED}",
            "tenancy.yaml: queues[vision].preemption.fairShare: unknown value 'OVERSERVED'; did"
                + " you mean 'OVER_SERVED'?"),
        Arguments.of(
            "bad grace",
            "preemptionGrace: 2m",
            "preemptionGrace: 2 minutes",
            "tenancy.yaml: scheduling.preemptionGrace: not a duration: '2 minutes' (fix:"),
        Arguments.of(
            "zero preemptions",
            "maxPreemptions: 3",
            "maxPreemptions: 0",
            "tenancy.yaml: scheduling.protection.maxPreemptions: out of range: 0"),
        Arguments.of(
            "unknown protection key",
            "protectFor: 1h",
            "protectfor: 1h",
            "tenancy.yaml: scheduling.protection.protectfor: unknown key; did you mean"
                + " 'protectFor'?"),
        Arguments.of(
            "negative gang size",
            "minGpus: 64",
            "minGpus: -1",
            "tenancy.yaml: scheduling.starvation.minGpus: out of range: -1"),
        Arguments.of(
            "max wait as a number",
            "maxWait: 6h",
            "maxWait: 6",
            "tenancy.yaml: scheduling.starvation.maxWait: must be a duration with a unit, got the"
                + " number 6"),
        Arguments.of(
            "unknown resource",
            "      cpu: {nominal: 2048}",
            "      cpus: {nominal: 2048}",
            "tenancy.yaml: queues[vision].quotas[cpus]: resource 'cpus': unknown (fix:"),
        Arguments.of(
            "YAML syntax error with line", "cohorts: [ml]", "cohorts: [ml", "tenancy.yaml: line "),
        Arguments.of(
            "duplicate key with line",
            "    cohort: ml                # must be declared under cohorts\n",
            "    cohort: ml                # must be declared under cohorts\n" + "    cohort: ml\n",
            "tenancy.yaml: line 21, column "));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("errors")
  void eachErrorNamesItsKeyPath(String name, String from, String to, String expected)
      throws IOException {
    String text = example();
    assertThat(text).as("the case edits the example").contains(from);
    String broken = text.replace(from, to);

    Throwable thrown = catchThrowable(() -> TenancyYaml.parse(broken, FILE));

    assertThat(thrown).isInstanceOf(TenancyYaml.InvalidConfig.class);
    var problems = ((TenancyYaml.InvalidConfig) thrown).problems();
    assertThat(problems).anyMatch(p -> p.startsWith(expected));
    assertThat(problems).allMatch(p -> p.startsWith(FILE + ": "));
    assertThat(thrown.getMessage()).isEqualTo(String.join("\n", problems));
  }

  @Test
  void aSyntaxErrorGivesLineAndColumn() {
    assertThatThrownBy(() -> TenancyYaml.parse("queues:\n  - name: [a\n  - b: }\n", FILE))
        .isInstanceOf(TenancyYaml.InvalidConfig.class)
        .hasMessageMatching("tenancy\\.yaml: line \\d+, column \\d+: not valid YAML: .*")
        .message()
        .doesNotContain("\n");
  }

  @Test
  void everyProblemIsReportedAtOnce() throws IOException {
    String broken =
        example()
            .replace("halfLife: 7d", "halfLife: soon")
            .replace("    quotas: ", "    quota: ")
            .replace("value: 1000,", "value: 1.5,");

    var e = catchThrowable(() -> TenancyYaml.parse(broken, FILE));

    assertThat(((TenancyYaml.InvalidConfig) e).problems())
        .anyMatch(p -> p.contains("fairShare.halfLife"))
        .anyMatch(p -> p.contains("queues[vision].quota: unknown key"))
        .anyMatch(p -> p.contains("queues[vision].quotas: missing"))
        .anyMatch(p -> p.contains("priorityClasses[production].value: must be a whole number"));
  }

  @Test
  void aMissingFileIsAnInvalidConfig() {
    assertThatThrownBy(() -> TenancyYaml.read(Path.of("no-such-tenancy.yaml")))
        .isInstanceOf(TenancyYaml.InvalidConfig.class)
        .hasMessageStartingWith("no-such-tenancy.yaml: cannot read the file");
  }

  private static final String[] FRAGMENTS = {
    ":",
    "{",
    "}",
    "[",
    "]",
    "-",
    "#",
    " ",
    "\n",
    "'",
    "\"",
    "a",
    "1",
    "-1",
    "x",
    "[]",
    "{}",
    "1.5",
    "99999999999999999999",
    "null",
    "true",
    "16Qi",
    "&a",
    "*a",
    "!!int",
    "\t",
    "~",
    "?"
  };

  /** Seeded: the same 300 documents on every run. */
  @Test
  void mutatedDocumentsOnlyEverThrowInvalidConfig() throws IOException {
    String base = example();
    var random = new Random(20240607L);
    int valid = 0;
    for (int n = 0; n < 300; n++) {
      String doc = base;
      int edits = 1 + random.nextInt(3);
      for (int k = 0; k < edits; k++) {
        doc = mutate(doc, random);
      }
      try {
        TenancyYaml.parse(doc, FILE);
        valid++;
      } catch (TenancyYaml.InvalidConfig e) {
        assertThat(e.problems()).as(doc).isNotEmpty().allMatch(p -> p.startsWith(FILE + ": "));
      } catch (RuntimeException e) {
        throw new AssertionError("document " + n + " threw " + e + ":\n" + doc, e);
      }
    }
    assertThat(valid).as("some mutations keep the document valid").isBetween(1, 299);
  }

  private static String mutate(String doc, Random random) {
    if (doc.isEmpty()) {
      return FRAGMENTS[random.nextInt(FRAGMENTS.length)];
    }
    var lines = new ArrayList<>(List.of(doc.split("\n", -1)));
    int at = random.nextInt(doc.length());
    return switch (random.nextInt(6)) {
      case 0 -> doc.substring(0, at) + doc.substring(at + 1);
      case 1 ->
          doc.substring(0, at) + FRAGMENTS[random.nextInt(FRAGMENTS.length)] + doc.substring(at);
      case 2 -> {
        lines.remove(random.nextInt(lines.size()));
        yield String.join("\n", lines);
      }
      case 3 -> {
        int i = random.nextInt(lines.size());
        lines.add(i, lines.get(random.nextInt(lines.size())));
        yield String.join("\n", lines);
      }
      case 4 -> {
        // Replace a scalar after ": " with a fragment.
        int colon = doc.indexOf(": ", at);
        if (colon < 0) {
          yield doc;
        }
        int end = colon + 2;
        while (end < doc.length() && ",}\n".indexOf(doc.charAt(end)) < 0) {
          end++;
        }
        yield doc.substring(0, colon + 2)
            + FRAGMENTS[random.nextInt(FRAGMENTS.length)]
            + doc.substring(end);
      }
      default -> {
        int i = random.nextInt(lines.size());
        lines.set(i, "  " + lines.get(i));
        yield String.join("\n", lines);
      }
    };
  }
}

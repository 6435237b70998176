package io.kairos.core.tenancy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kairos.core.tenancy.PreemptionPolicy.BorrowWithinCohort;
import io.kairos.core.tenancy.PreemptionPolicy.ReclaimWithinCohort;
import io.kairos.core.tenancy.PreemptionPolicy.WithinQueue;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Every validation rule of {@link TenancyConfig}: the message names the key path and a fix. */
class TenancyConfigTest {
  static final Resource H100 = Resource.gpu("H100");
  static final PriorityClass HIGH = new PriorityClass("high", 1000, false);
  static final PriorityClass LOW = new PriorityClass("low", 10, true);

  static QueueSpec research(ResourceQuota quota) {
    return QueueSpec.of("research", "lab", Map.of(H100, quota));
  }

  static QueueSpec prod() {
    return QueueSpec.of("prod", "lab", Map.of(H100, ResourceQuota.of(8)));
  }

  static TenancyConfig config(QueueSpec... queues) {
    return new TenancyConfig(List.of(HIGH, LOW), List.of(new CohortSpec("lab")), List.of(queues));
  }

  record Bad(String name, Supplier<TenancyConfig> build, String keyPath, String problem) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Bad> badConfigs() {
    return Stream.of(
        new Bad(
            "negative nominal",
            () -> config(research(ResourceQuota.of(-2)), prod()),
            "queues[research].quotas[gpu:H100].nominal: ",
            "must be >= 0, got -2 (fix:"),
        new Bad(
            "negative borrowing limit",
            () -> config(research(ResourceQuota.of(8).withBorrowingLimit(-1)), prod()),
            "queues[research].quotas[gpu:H100].borrowingLimit: ",
            "must be >= 0, got -1"),
        new Bad(
            "negative lending limit",
            () -> config(research(ResourceQuota.of(8).withLendingLimit(-1)), prod()),
            "queues[research].quotas[gpu:H100].lendingLimit: ",
            "must be >= 0, got -1"),
        new Bad(
            "lending limit above nominal",
            () -> config(research(ResourceQuota.of(8).withLendingLimit(9)), prod()),
            "queues[research].quotas[gpu:H100].lendingLimit: ",
            "must be <= nominal 8, got 9"),
        new Bad(
            "borrowing limit without a cohort",
            () ->
                config(
                    QueueSpec.of(
                        "solo", null, Map.of(H100, ResourceQuota.of(8).withBorrowingLimit(2))),
                    prod()),
            "queues[solo].quotas[gpu:H100].borrowingLimit: ",
            "without a cohort"),
        new Bad(
            "lending limit without a cohort",
            () ->
                config(
                    QueueSpec.of(
                        "solo", null, Map.of(H100, ResourceQuota.of(8).withLendingLimit(2))),
                    prod()),
            "queues[solo].quotas[gpu:H100].lendingLimit: ",
            "without a cohort"),
        new Bad(
            "duplicate queue", () -> config(prod(), prod()), "queues[prod]: ", "duplicate name"),
        new Bad(
            "blank queue name",
            () -> config(QueueSpec.of(" ", "lab", Map.of(H100, ResourceQuota.of(1)))),
            "queues[#0].name: ",
            "must not be blank"),
        new Bad(
            "duplicate cohort",
            () ->
                new TenancyConfig(
                    List.of(),
                    List.of(new CohortSpec("lab"), new CohortSpec("lab")),
                    List.of(prod())),
            "cohorts[lab]: ",
            "duplicate name"),
        new Bad(
            "blank cohort name",
            () -> new TenancyConfig(List.of(), List.of(new CohortSpec("")), List.of()),
            "cohorts[#0].name: ",
            "must not be blank"),
        new Bad(
            "duplicate priority class",
            () ->
                new TenancyConfig(
                    List.of(HIGH, new PriorityClass("high", 1, true)), List.of(), List.of()),
            "priorityClasses[high]: ",
            "duplicate name"),
        new Bad(
            "blank priority class name",
            () -> new TenancyConfig(List.of(new PriorityClass("", 1, true)), List.of(), List.of()),
            "priorityClasses[#0].name: ",
            "must not be blank"),
        new Bad(
            "undeclared cohort",
            () -> config(QueueSpec.of("research", "labb", Map.of(H100, ResourceQuota.of(8)))),
            "queues[research].cohort: ",
            "unknown cohort 'labb'"),
        new Bad(
            "no quotas",
            () -> config(QueueSpec.of("research", "lab", Map.of())),
            "queues[research].quotas: ",
            "at least one resource"),
        new Bad(
            "unknown default priority class",
            () ->
                config(
                    new QueueSpec(
                        "research",
                        "lab",
                        Map.of(H100, ResourceQuota.of(8)),
                        PreemptionPolicy.NONE,
                        new QueueDefaults("ml", "urgent"))),
            "queues[research].defaults.priorityClass: ",
            "unknown priority class 'urgent'"),
        new Bad(
            "blank default account",
            () ->
                config(
                    new QueueSpec(
                        "research",
                        "lab",
                        Map.of(H100, ResourceQuota.of(8)),
                        PreemptionPolicy.NONE,
                        new QueueDefaults("  ", null))),
            "queues[research].defaults.account: ",
            "must not be blank"),
        new Bad(
            "reclaim without a cohort",
            () ->
                config(
                    withPreemption(
                        "solo",
                        null,
                        new PreemptionPolicy(
                            WithinQueue.NEVER, ReclaimWithinCohort.ANY, BorrowWithinCohort.NEVER))),
            "queues[solo].preemption.reclaimWithinCohort: ",
            "without a cohort"),
        new Bad(
            "borrow-preemption without a cohort",
            () ->
                config(
                    withPreemption(
                        "solo",
                        null,
                        new PreemptionPolicy(
                            WithinQueue.NEVER,
                            ReclaimWithinCohort.ANY,
                            new BorrowWithinCohort(
                                BorrowWithinCohort.Policy.LOWER_PRIORITY, null)))),
            "queues[solo].preemption.borrowWithinCohort.policy: ",
            "without a cohort"),
        new Bad(
            "borrow-preemption without reclaim",
            () ->
                config(
                    withPreemption(
                        "research",
                        "lab",
                        new PreemptionPolicy(
                            WithinQueue.LOWER_PRIORITY,
                            ReclaimWithinCohort.NEVER,
                            new BorrowWithinCohort(
                                BorrowWithinCohort.Policy.LOWER_PRIORITY, 100)))),
            "queues[research].preemption.borrowWithinCohort.policy: ",
            "needs reclaimWithinCohort other than NEVER"),
        new Bad(
            "threshold without borrow-preemption",
            () ->
                config(
                    withPreemption(
                        "research",
                        "lab",
                        new PreemptionPolicy(
                            WithinQueue.NEVER,
                            ReclaimWithinCohort.ANY,
                            new BorrowWithinCohort(BorrowWithinCohort.Policy.NEVER, 100)))),
            "queues[research].preemption.borrowWithinCohort.maxPriorityThreshold: ",
            "while the policy is NEVER"),
        new Bad(
            "cohort nominal sum overflows",
            () ->
                config(
                    research(ResourceQuota.of(Long.MAX_VALUE)),
                    QueueSpec.of("prod", "lab", Map.of(H100, ResourceQuota.of(1)))),
            "cohorts[lab]: ",
            "nominal quotas of gpu:H100 sum past"));
  }

  static QueueSpec withPreemption(String name, String cohort, PreemptionPolicy policy) {
    return new QueueSpec(
        name, cohort, Map.of(H100, ResourceQuota.of(8)), policy, QueueDefaults.NONE);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badConfigs")
  void badConfigIsRefusedNamingTheKeyPathAndAFix(Bad bad) {
    assertThatThrownBy(bad.build()::get)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("\n" + bad.keyPath() + "")
        .hasMessageContaining(bad.problem())
        .hasMessageContaining("(fix: ");
  }

  @Test
  void everyProblemIsReportedAtOnce() {
    assertThatThrownBy(
            () ->
                config(
                    research(ResourceQuota.of(-2).withLendingLimit(-1)),
                    QueueSpec.of(
                        "solo", null, Map.of(H100, ResourceQuota.of(4).withBorrowingLimit(1)))))
        .hasMessageStartingWith("invalid tenancy configuration (3):")
        .hasMessageContaining("queues[research].quotas[gpu:H100].nominal")
        .hasMessageContaining("queues[research].quotas[gpu:H100].lendingLimit")
        .hasMessageContaining("queues[solo].quotas[gpu:H100].borrowingLimit");
  }

  @Test
  void aValidConfigurationKeepsItsOrderAndAnswersLookups() {
    var research =
        new QueueSpec(
            "research",
            "lab",
            Map.of(H100, ResourceQuota.of(8).withLendingLimit(8).withBorrowingLimit(0)),
            new PreemptionPolicy(
                WithinQueue.LOWER_PRIORITY,
                ReclaimWithinCohort.LOWER_PRIORITY,
                new BorrowWithinCohort(BorrowWithinCohort.Policy.LOWER_PRIORITY, 100)),
            new QueueDefaults("ml", "low"));
    var solo = QueueSpec.of("solo", null, Map.of(Resource.CPUS, ResourceQuota.of(0)));

    var config = config(research, prod(), solo);

    assertThat(config.queues())
        .extracting(QueueSpec::name)
        .containsExactly("research", "prod", "solo");
    assertThat(config.members("lab"))
        .extracting(QueueSpec::name)
        .containsExactly("research", "prod");
    assertThat(config.priorityClass("low")).contains(LOW);
    assertThat(config.queue("nobody")).isEmpty();
  }

  @Test
  void resourcesParseAndPrintTheirConfigurationNames() {
    assertThat(Resource.parse("gpu:H100")).isEqualTo(H100);
    assertThat(Resource.parse("cpu")).isEqualTo(Resource.CPUS);
    assertThat(Resource.parse("memory")).isEqualTo(Resource.MEMORY_BYTES);
    assertThat(H100).hasToString("gpu:H100");
    assertThat(
            List.of(Resource.MEMORY_BYTES, Resource.CPUS, H100, Resource.gpu("A100")).stream()
                .sorted())
        .containsExactly(Resource.gpu("A100"), H100, Resource.CPUS, Resource.MEMORY_BYTES);
    assertThatThrownBy(() -> Resource.parse("tpu")).hasMessageContaining("fix:");
    assertThatThrownBy(() -> Resource.gpu(" ")).hasMessageContaining("fix:");
    assertThatThrownBy(() -> new Resource(Resource.Kind.CPU, "fast")).hasMessageContaining("fix:");
  }
}

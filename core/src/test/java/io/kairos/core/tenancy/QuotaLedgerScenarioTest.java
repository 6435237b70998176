package io.kairos.core.tenancy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kairos.core.tenancy.Admission.Borrows;
import io.kairos.core.tenancy.Admission.DoesNotFit;
import io.kairos.core.tenancy.Admission.Fits;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Borrowing, lending limits, borrowing limits and reclaim, as scenarios taken from Kueue's
 * ClusterQueue documentation (site/content/en/docs/concepts/cluster_queue.md): team-a (nominal 9
 * CPUs) and team-b (nominal 12) in cohort team-ab, with a third queue where a scenario needs one.
 */
class QuotaLedgerScenarioTest {
  static final Resource CPU = Resource.CPUS;
  static final Resource H100 = Resource.gpu("H100");
  static final Resource A100 = Resource.gpu("A100");

  /** What a check should answer. */
  sealed interface Expect {}

  record ExpectFits() implements Expect {}

  record ExpectBorrows(Map<Resource, Long> borrowed) implements Expect {}

  record ExpectDoesNotFit(Resource resource, long available, long reclaimable) implements Expect {}

  /** Admitted usage before the check. */
  record Use(String queue, Map<Resource, Long> usage) {}

  record Scenario(
      String name,
      List<QueueSpec> queues,
      List<Use> running,
      String queue,
      Map<Resource, Long> request,
      Expect expect) {
    @Override
    public String toString() {
      return name;
    }
  }

  static QueueSpec queue(String name, String cohort, Resource r, ResourceQuota quota) {
    return QueueSpec.of(name, cohort, Map.of(r, quota));
  }

  static QueueSpec teamA(ResourceQuota quota) {
    return queue("team-a", "team-ab", CPU, quota);
  }

  static QueueSpec teamB(ResourceQuota quota) {
    return queue("team-b", "team-ab", CPU, quota);
  }

  static Use use(String queue, long cpus) {
    return new Use(queue, Map.of(CPU, cpus));
  }

  static Map<Resource, Long> cpus(long n) {
    return Map.of(CPU, n);
  }

  static Expect fits() {
    return new ExpectFits();
  }

  static Expect borrows(long cpus) {
    return new ExpectBorrows(Map.of(CPU, cpus));
  }

  static Expect doesNotFit(long available, long reclaimable) {
    return new ExpectDoesNotFit(CPU, available, reclaimable);
  }

  static Stream<Scenario> scenarios() {
    var a9 = teamA(ResourceQuota.of(9));
    var b12 = teamB(ResourceQuota.of(12));
    return Stream.of(
        // Plain borrowing: "team-a can admit workloads up to 21 CPUs if team-b is idle".
        new Scenario("fits within nominal", List.of(a9, b12), List.of(), "team-a", cpus(9), fits()),
        new Scenario(
            "borrows the whole idle quota of the cohort",
            List.of(a9, b12),
            List.of(),
            "team-a",
            cpus(21),
            borrows(12)),
        new Scenario(
            "cannot borrow past the cohort's unused quota",
            List.of(a9, b12),
            List.of(),
            "team-a",
            cpus(22),
            doesNotFit(21, 0)),
        new Scenario(
            "borrows only what the other queue leaves unused",
            List.of(a9, b12),
            List.of(use("team-b", 10)),
            "team-a",
            cpus(12),
            doesNotFit(11, 0)),
        new Scenario(
            "an already borrowing queue borrows more",
            List.of(a9, b12),
            List.of(use("team-a", 12)),
            "team-a",
            cpus(5),
            borrows(5)),
        // borrowingLimit: "team-a can borrow at most 1 CPU, so it can use at most 10".
        new Scenario(
            "borrowing limit caps borrowing",
            List.of(teamA(ResourceQuota.of(9).withBorrowingLimit(1)), b12),
            List.of(),
            "team-a",
            cpus(10),
            borrows(1)),
        new Scenario(
            "borrowing limit refuses one more",
            List.of(teamA(ResourceQuota.of(9).withBorrowingLimit(1)), b12),
            List.of(),
            "team-a",
            cpus(11),
            doesNotFit(10, 0)),
        new Scenario(
            "borrowing limit counts what is already borrowed",
            List.of(teamA(ResourceQuota.of(9).withBorrowingLimit(2)), b12),
            List.of(use("team-a", 10)),
            "team-a",
            cpus(2),
            doesNotFit(1, 0)),
        new Scenario(
            "borrowing limit 0 still lends",
            List.of(a9, teamB(ResourceQuota.of(12).withBorrowingLimit(0))),
            List.of(),
            "team-a",
            cpus(21),
            borrows(12)),
        new Scenario(
            "borrowing limit 0 forbids borrowing",
            List.of(a9, teamB(ResourceQuota.of(12).withBorrowingLimit(0))),
            List.of(),
            "team-b",
            cpus(13),
            doesNotFit(12, 0)),
        // lendingLimit: "team-b lends at most 1 CPU; it keeps 11 for itself even when idle".
        new Scenario(
            "lending limit caps what the cohort lends",
            List.of(a9, teamB(ResourceQuota.of(12).withLendingLimit(1))),
            List.of(),
            "team-a",
            cpus(10),
            borrows(1)),
        new Scenario(
            "lending limit refuses past it",
            List.of(a9, teamB(ResourceQuota.of(12).withLendingLimit(1))),
            List.of(),
            "team-a",
            cpus(11),
            doesNotFit(10, 0)),
        new Scenario(
            "the kept part stays available to its queue while the other borrows",
            List.of(a9, teamB(ResourceQuota.of(12).withLendingLimit(1))),
            List.of(use("team-a", 10)),
            "team-b",
            cpus(11),
            fits()),
        new Scenario(
            "the lent part is reclaimable, the kept part is not",
            List.of(a9, teamB(ResourceQuota.of(12).withLendingLimit(1))),
            List.of(use("team-a", 10)),
            "team-b",
            cpus(12),
            doesNotFit(11, 1)),
        new Scenario(
            "lending limit 0 lends nothing",
            List.of(a9, teamB(ResourceQuota.of(12).withLendingLimit(0))),
            List.of(),
            "team-a",
            cpus(10),
            doesNotFit(9, 0)),
        new Scenario(
            "a queue with a lending limit borrows from the other",
            List.of(a9, teamB(ResourceQuota.of(12).withLendingLimit(1))),
            List.of(use("team-b", 12)),
            "team-b",
            cpus(9),
            borrows(9)),
        // Reclaim: the lender's own quota is borrowed by the other queue.
        new Scenario(
            "a lender whose quota is all borrowed cannot start anything",
            List.of(a9, b12),
            List.of(use("team-a", 21)),
            "team-b",
            cpus(1),
            doesNotFit(0, 12)),
        new Scenario(
            "a lender gets back what is not borrowed",
            List.of(a9, b12),
            List.of(use("team-a", 15)),
            "team-b",
            cpus(6),
            fits()),
        new Scenario(
            "a lender's shortfall is reclaimable",
            List.of(a9, b12),
            List.of(use("team-a", 15)),
            "team-b",
            cpus(8),
            doesNotFit(6, 6)),
        // Three queues: a third queue's idle quota covers the first borrower.
        new Scenario(
            "a third queue's idle quota covers a lender",
            List.of(a9, b12, queue("team-c", "team-ab", CPU, ResourceQuota.of(6))),
            List.of(use("team-a", 12)),
            "team-b",
            cpus(12),
            fits()),
        new Scenario(
            "three queues: a borrower takes the rest of two lenders",
            List.of(a9, b12, queue("team-c", "team-ab", CPU, ResourceQuota.of(6))),
            List.of(use("team-b", 4), use("team-c", 6)),
            "team-a",
            cpus(17),
            borrows(8)),
        new Scenario(
            "three queues: limits of two lenders add up",
            List.of(
                a9,
                teamB(ResourceQuota.of(12).withLendingLimit(2)),
                queue("team-c", "team-ab", CPU, ResourceQuota.of(6).withLendingLimit(3))),
            List.of(),
            "team-a",
            cpus(15),
            doesNotFit(14, 0)),
        new Scenario(
            "a zero-nominal queue only borrows",
            List.of(queue("scavenger", "team-ab", CPU, ResourceQuota.of(0)), b12),
            List.of(use("team-b", 4)),
            "scavenger",
            cpus(8),
            borrows(8)),
        // No cohort.
        new Scenario(
            "a queue without a cohort fits within nominal",
            List.of(queue("solo", null, CPU, ResourceQuota.of(8)), b12),
            List.of(use("solo", 6)),
            "solo",
            cpus(2),
            fits()),
        new Scenario(
            "a queue without a cohort cannot borrow",
            List.of(queue("solo", null, CPU, ResourceQuota.of(8)), b12),
            List.of(use("solo", 6)),
            "solo",
            cpus(4),
            doesNotFit(2, 0)),
        new Scenario(
            "a queue without a cohort lends nothing",
            List.of(a9, queue("solo", null, CPU, ResourceQuota.of(8))),
            List.of(),
            "team-a",
            cpus(10),
            doesNotFit(9, 0)),
        // Flavors.
        new Scenario(
            "a flavor the queue has no quota of never fits, even if the cohort has it",
            List.of(
                queue("team-a", "team-ab", H100, ResourceQuota.of(8)),
                queue("team-b", "team-ab", A100, ResourceQuota.of(8))),
            List.of(),
            "team-a",
            Map.of(A100, 1L),
            new ExpectDoesNotFit(A100, 0, 0)),
        new Scenario(
            "flavors are lent separately",
            List.of(
                QueueSpec.of(
                    "team-a",
                    "team-ab",
                    Map.of(H100, ResourceQuota.of(8), A100, ResourceQuota.of(0))),
                queue("team-b", "team-ab", A100, ResourceQuota.of(8))),
            List.of(),
            "team-a",
            Map.of(H100, 9L),
            new ExpectDoesNotFit(H100, 8, 0)),
        new Scenario(
            "a multi-resource request reports only the resources it borrows",
            List.of(
                QueueSpec.of(
                    "team-a",
                    "team-ab",
                    Map.of(H100, ResourceQuota.of(8), CPU, ResourceQuota.of(64))),
                QueueSpec.of(
                    "team-b",
                    "team-ab",
                    Map.of(H100, ResourceQuota.of(8), CPU, ResourceQuota.of(64)))),
            List.of(),
            "team-a",
            Map.of(H100, 12L, CPU, 32L),
            new ExpectBorrows(Map.of(H100, 4L))),
        new Scenario(
            "a multi-resource request fails on the first resource in order",
            List.of(
                QueueSpec.of(
                    "team-a",
                    "team-ab",
                    Map.of(H100, ResourceQuota.of(8), CPU, ResourceQuota.of(64))),
                QueueSpec.of(
                    "team-b",
                    "team-ab",
                    Map.of(H100, ResourceQuota.of(8), CPU, ResourceQuota.of(64)))),
            List.of(),
            "team-a",
            Map.of(H100, 17L, CPU, 129L),
            new ExpectDoesNotFit(H100, 16, 0)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("scenarios")
  void scenario(Scenario s) {
    var ledger = new QuotaLedger(TenancyConfig.ofQueues(s.queues()));
    for (Use u : s.running()) {
      ledger.add(u.queue(), u.usage());
    }
    Admission got = ledger.check(s.queue(), s.request());
    switch (s.expect()) {
      case ExpectFits() -> assertThat(got).isEqualTo(Fits.INSTANCE);
      case ExpectBorrows(var borrowed) -> assertThat(got).isEqualTo(new Borrows(borrowed));
      case ExpectDoesNotFit(var resource, var available, var reclaimable) -> {
        assertThat(got).isInstanceOf(DoesNotFit.class);
        var refused = (DoesNotFit) got;
        assertThat(refused.resource()).isEqualTo(resource);
        assertThat(refused.available()).as("available").isEqualTo(available);
        assertThat(refused.reclaimable()).as("reclaimable").isEqualTo(reclaimable);
        assertThat(ledger.reclaimable(s.queue(), resource)).isEqualTo(reclaimable);
        assertThat(refused.reason()).startsWith(resource + ": queue " + s.queue());
      }
    }
    if (got.admits()) {
      ledger.add(s.queue(), s.request());
    }
    ledger.checkInvariants();
  }

  @Test
  void reasonNamesTheQueueTheNominalWhatTheCohortLendsAndTheNeed() {
    var ledger =
        new QuotaLedger(
            TenancyConfig.ofQueues(
                List.of(
                    queue("research", "lab", H100, ResourceQuota.of(8)),
                    queue("prod", "lab", H100, ResourceQuota.of(4).withLendingLimit(1)))));
    ledger.add("research", Map.of(H100, 6L));
    ledger.add("prod", Map.of(H100, 3L));

    var refused = (DoesNotFit) ledger.check("research", Map.of(H100, 4L));

    assertThat(refused.reason())
        .isEqualTo("gpu:H100: queue research uses 6 of nominal 8, cohort lends 1, job needs 4");
    assertThat(refused.available()).isEqualTo(3);
  }

  @Test
  void reasonSaysWhenTheBorrowingLimitBindsAndWhatIsReclaimable() {
    var ledger =
        new QuotaLedger(
            TenancyConfig.ofQueues(
                List.of(
                    teamA(ResourceQuota.of(9).withBorrowingLimit(2)),
                    teamB(ResourceQuota.of(12)))));
    ledger.add("team-a", cpus(10));
    assertThat(((DoesNotFit) ledger.check("team-a", cpus(2))).reason())
        .contains("borrowingLimit 2, borrowing 1");

    ledger.add("team-b", cpus(0));
    var full =
        new QuotaLedger(
            TenancyConfig.ofQueues(
                List.of(teamA(ResourceQuota.of(9)), teamB(ResourceQuota.of(12)))));
    full.add("team-a", cpus(21));
    assertThat(((DoesNotFit) full.check("team-b", cpus(1))).reason())
        .contains("uses 0 of nominal 12, cohort lends 0")
        .contains("other queues borrow 12 of its nominal quota (reclaimable)");
  }

  @Test
  void borrowedListsEachBorrowingQueueInConfigurationOrder() {
    var ledger =
        new QuotaLedger(
            TenancyConfig.ofQueues(
                List.of(
                    teamA(ResourceQuota.of(9)),
                    teamB(ResourceQuota.of(12)),
                    queue("team-c", "team-ab", CPU, ResourceQuota.of(10)))));
    ledger.add("team-c", cpus(14));
    ledger.add("team-a", cpus(11));
    ledger.add("team-b", cpus(3));

    var expected = new LinkedHashMap<String, Long>();
    expected.put("team-a", 2L);
    expected.put("team-c", 4L);
    assertThat(ledger.borrowed(CPU)).containsExactlyEntriesOf(expected);
    assertThat(ledger.borrowed(H100)).isEmpty();
    assertThat(ledger.reclaimable("team-b", CPU)).isEqualTo(6);
  }

  @Test
  void removingWhatWasAddedRestoresTheLedger() {
    var ledger =
        new QuotaLedger(
            TenancyConfig.ofQueues(
                List.of(
                    teamA(ResourceQuota.of(9)), teamB(ResourceQuota.of(12).withLendingLimit(4)))));
    ledger.add("team-b", cpus(5));
    var before = ledger.copy();

    ledger.add("team-a", cpus(13));
    ledger.remove("team-a", cpus(13));

    assertThat(ledger.toString()).isEqualTo(before.toString());
    assertThat(ledger.check("team-a", cpus(13))).isEqualTo(before.check("team-a", cpus(13)));
    ledger.checkInvariants();
  }

  @Test
  void badUsageIsRefusedAndChangesNothing() {
    var ledger =
        new QuotaLedger(
            TenancyConfig.ofQueues(
                List.of(teamA(ResourceQuota.of(9)), teamB(ResourceQuota.of(12)))));
    ledger.add("team-a", cpus(3));

    assertThatThrownBy(() -> ledger.add("nobody", cpus(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown queue 'nobody'");
    assertThatThrownBy(() -> ledger.add("team-a", Map.of(H100, 1L)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("gpu:H100");
    assertThatThrownBy(() -> ledger.add("team-a", cpus(-1)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ledger.remove("team-a", cpus(4)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("usage is 3, cannot remove 4");
    assertThatThrownBy(() -> ledger.check("team-a", cpus(-2)))
        .isInstanceOf(IllegalArgumentException.class);

    assertThat(ledger.usage("team-a", CPU)).isEqualTo(3);
    ledger.checkInvariants();
  }

  @Test
  void zeroAmountsAndEmptyRequestsFit() {
    var ledger =
        new QuotaLedger(
            TenancyConfig.ofQueues(List.of(queue("solo", null, CPU, ResourceQuota.of(0)))));
    assertThat(ledger.check("solo", Map.of())).isEqualTo(Fits.INSTANCE);
    var request = new LinkedHashMap<Resource, Long>();
    request.put(CPU, 0L);
    request.put(H100, 0L);
    assertThat(ledger.check("solo", request)).isEqualTo(Fits.INSTANCE);
    assertThat(new ArrayList<>(ledger.borrowed(CPU).keySet())).isEmpty();
  }
}

package io.kairos.core.tenancy;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.testkit.Coverage;
import io.kairos.testkit.Properties;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The quota invariant (DESIGN.md invariant 3) over random configurations and admit/release
 * sequences, over {@link Properties#seeds()}; a failure names its seed ({@code
 * -Dkairos.propertySeed=N} replays one).
 */
class QuotaLedgerProperties {
  static final List<Resource> RESOURCES =
      List.of(Resource.gpu("H100"), Resource.gpu("A100"), Resource.CPUS);
  static final int STEPS = 80;

  static final Coverage COVERAGE = new Coverage("usageStaysWithinQuotaAndReleaseRestoresTheLedger");
  static final String FITS = "a request that fits";
  static final String BORROWS = "a request that borrows";
  static final String DOES_NOT_FIT = "a request that does not fit";
  static final String NOMINAL_REFUSED = "a refusal checked against borrowing in the cohort";

  /**
   * Each answer is checked only when the ledger gives it: shares about half of what the generator
   * gives over the 200 default seeds (in brackets), so that a generator that stops producing one
   * fails here and a small drift does not.
   */
  @AfterAll
  static void everyAnswerCameUp() {
    COVERAGE.assertSeen(FITS, 0.5); // (100%)
    COVERAGE.assertSeen(BORROWS, 0.25); // (52%)
    COVERAGE.assertSeen(DOES_NOT_FIT, 0.5); // (100%)
    COVERAGE.assertSeen(NOMINAL_REFUSED, 0.5); // (100%)
  }

  static LongStream seeds() {
    return Properties.seeds();
  }

  record Admitted(String queue, Map<Resource, Long> usage) {}

  static TenancyConfig randomConfig(SplittableRandom rnd) {
    int cohorts = 1 + rnd.nextInt(2);
    int queues = 1 + rnd.nextInt(4);
    var specs = new ArrayList<QueueSpec>();
    for (int q = 0; q < queues; q++) {
      String cohort = rnd.nextInt(5) == 0 ? null : "c" + rnd.nextInt(cohorts);
      var quotas = new HashMap<Resource, ResourceQuota>();
      for (Resource r : RESOURCES) {
        if (rnd.nextInt(4) == 0 && !(quotas.isEmpty() && r == RESOURCES.getLast())) {
          continue;
        }
        long nominal = rnd.nextInt(4) == 0 ? 0 : rnd.nextInt(11);
        Long borrowing = cohort != null && rnd.nextBoolean() ? (long) rnd.nextInt(7) : null;
        Long lending =
            cohort != null && rnd.nextBoolean() ? (long) rnd.nextInt((int) nominal + 1) : null;
        quotas.put(r, new ResourceQuota(nominal, borrowing, lending));
      }
      specs.add(QueueSpec.of("q" + q, cohort, quotas));
    }
    return TenancyConfig.ofQueues(specs);
  }

  static Map<Resource, Long> randomRequest(SplittableRandom rnd) {
    var request = new HashMap<Resource, Long>();
    int n = 1 + rnd.nextInt(2);
    for (int i = 0; i < n; i++) {
      request.put(RESOURCES.get(rnd.nextInt(RESOURCES.size())), (long) rnd.nextInt(9));
    }
    return request;
  }

  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void usageStaysWithinQuotaAndReleaseRestoresTheLedger(long seed) {
    Properties.check(
        seed,
        () -> {
          var coverage = COVERAGE.run();
          var rnd = new SplittableRandom(seed);
          TenancyConfig config = randomConfig(rnd);
          var ledger = new QuotaLedger(config);
          String empty = ledger.toString();
          var admitted = new ArrayList<Admitted>();
          for (int step = 0; step < STEPS; step++) {
            if (!admitted.isEmpty() && rnd.nextInt(3) == 0) {
              Admitted a = admitted.remove(rnd.nextInt(admitted.size()));
              ledger.remove(a.queue(), a.usage());
            } else {
              String queue = config.queues().get(rnd.nextInt(config.queues().size())).name();
              var request = randomRequest(rnd);
              Admission answer = ledger.check(queue, request);
              checkAnswer(config, ledger, queue, request, answer, coverage);
              if (answer.admits()) {
                String before = ledger.toString();
                ledger.add(queue, request);
                ledger.remove(queue, request);
                assertThat(ledger.toString()).as("add then remove restores").isEqualTo(before);
                ledger.add(queue, request);
                admitted.add(new Admitted(queue, request));
              }
            }
            ledger.checkInvariants();
            checkQuotaInvariant(config, ledger);
          }
          for (Admitted a : admitted.reversed()) {
            ledger.remove(a.queue(), a.usage());
          }
          assertThat(ledger.toString())
              .as("releasing everything empties the ledger")
              .isEqualTo(empty);
          ledger.checkInvariants();
        });
  }

  /**
   * Fits is within nominal; Borrows names exactly the excess; a non-borrowing cohort never refuses
   * nominal quota.
   */
  static void checkAnswer(
      TenancyConfig config,
      QuotaLedger ledger,
      String queue,
      Map<Resource, Long> request,
      Admission answer,
      Coverage.Run coverage) {
    QueueSpec spec = config.queue(queue).orElseThrow();
    var excess = new TreeMap<Resource, Long>();
    boolean withinNominal = true;
    for (var e : request.entrySet()) {
      if (e.getValue() == 0) {
        continue;
      }
      ResourceQuota quota = spec.quotas().get(e.getKey());
      if (quota == null) {
        withinNominal = false;
        continue;
      }
      long used = ledger.usage(queue, e.getKey());
      long more =
          Math.max(0, used + e.getValue() - quota.nominal()) - Math.max(0, used - quota.nominal());
      if (used + e.getValue() > quota.nominal()) {
        withinNominal = false;
      }
      if (more > 0) {
        excess.put(e.getKey(), more);
      }
    }
    switch (answer) {
      case Admission.Fits _ -> {
        coverage.saw(FITS);
        assertThat(withinNominal).as("fits within nominal").isTrue();
      }
      case Admission.Borrows(var borrowed) -> {
        coverage.saw(BORROWS);
        assertThat(borrowed).isEqualTo(excess);
      }
      case Admission.DoesNotFit refused -> {
        coverage.saw(DOES_NOT_FIT);
        assertThat(refused.needed()).isGreaterThan(refused.available());
        boolean nobodyBorrows = true;
        for (Resource r : RESOURCES) {
          nobodyBorrows &= ledger.borrowed(r).isEmpty();
        }
        if (nobodyBorrows) {
          coverage.saw(NOMINAL_REFUSED);
          assertThat(withinNominal)
              .as("nominal quota is refused only when someone borrows it")
              .isFalse();
        }
      }
    }
  }

  /**
   * Invariant 3: each queue within nominal plus its borrowing limit; each cohort within its
   * nominals and lending limits.
   */
  static void checkQuotaInvariant(TenancyConfig config, QuotaLedger ledger) {
    var cohortUsage = new HashMap<String, Long>();
    var cohortNominal = new HashMap<String, Long>();
    var cohortPooledUse = new HashMap<String, Long>();
    var cohortLendable = new HashMap<String, Long>();
    for (QueueSpec q : config.queues()) {
      for (var e : q.quotas().entrySet()) {
        ResourceQuota quota = e.getValue();
        long used = ledger.usage(q.name(), e.getKey());
        long allowed =
            q.cohort() == null
                ? quota.nominal()
                : quota.borrowingLimit() == null
                    ? Long.MAX_VALUE
                    : quota.nominal() + quota.borrowingLimit();
        assertThat(used)
            .as("%s %s usage within nominal + borrowing limit", q.name(), e.getKey())
            .isLessThanOrEqualTo(allowed);
        if (q.cohort() != null) {
          String key = q.cohort() + "/" + e.getKey();
          cohortUsage.merge(key, used, Long::sum);
          cohortNominal.merge(key, quota.nominal(), Long::sum);
          cohortPooledUse.merge(key, Math.max(0, used - quota.guaranteed()), Long::sum);
          cohortLendable.merge(key, quota.nominal() - quota.guaranteed(), Long::sum);
        }
      }
    }
    for (String key : cohortUsage.keySet()) {
      assertThat(cohortUsage.get(key))
          .as("%s usage within the sum of nominals", key)
          .isLessThanOrEqualTo(cohortNominal.get(key));
      assertThat(cohortPooledUse.get(key))
          .as("%s lending limits respected", key)
          .isLessThanOrEqualTo(cohortLendable.get(key));
    }
  }
}

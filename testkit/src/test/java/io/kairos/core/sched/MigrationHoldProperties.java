package io.kairos.core.sched;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.core.model.Cluster;
import io.kairos.core.model.JobId;
import io.kairos.core.model.Placement;
import io.kairos.core.sched.preempt.ProtectionPolicy;
import io.kairos.core.tenancy.PreemptionPolicy;
import io.kairos.core.tenancy.PreemptionPolicy.BorrowWithinCohort;
import io.kairos.core.tenancy.PreemptionPolicy.ReclaimWithinCohort;
import io.kairos.core.tenancy.PreemptionPolicy.WithinQueue;
import io.kairos.core.tenancy.QueueDefaults;
import io.kairos.core.tenancy.QueueSpec;
import io.kairos.core.tenancy.Resource;
import io.kairos.core.tenancy.ResourceQuota;
import io.kairos.core.tenancy.TenancyConfig;
import io.kairos.core.tenancy.Tenants;
import io.kairos.testkit.Clusters;
import io.kairos.testkit.Coverage;
import io.kairos.testkit.Jobs;
import io.kairos.testkit.Properties;
import io.kairos.testkit.SchedulerHarness;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The hold on a moved job's target nodes ({@link Migrations#held}) over generated clusters, holds
 * and workloads (fixed, per-node and elastic gangs, random priorities, one queue whose lower
 * priorities may be preempted), under every policy:
 *
 * <ol>
 *   <li><b>no held node is given to another job while the hold is live</b>: no start of another
 *       job, no node an elastic job grows onto, no move's target is a held node before its hold
 *       ends;
 *   <li><b>every hold ends by its end</b>: a pass at or after a hold's end sees nothing of it (and
 *       {@link Migrations#expiredAt} names its job for the driver to end it for good);
 *   <li><b>preemption plans off the held nodes</b>: once a pass's victims have stopped, the next
 *       pass at the same time (holds unchanged) starts the preemptor, so the room it was preempted
 *       for was not on a held node.
 * </ol>
 *
 * Holds are given to jobs that are not in the cluster (moved elsewhere) or to waiting jobs, with
 * random ends; {@link #holdsCameUp} fails when the generated cases stop exercising them.
 */
class MigrationHoldProperties {
  private static final Resource GPU = Resource.gpu("gpu");
  private static final MigrationSettings SETTINGS = new MigrationSettings(3600, 60, 0.30);
  private static final PreemptionPolicy WITHIN_QUEUE =
      new PreemptionPolicy(
          WithinQueue.LOWER_PRIORITY, ReclaimWithinCohort.NEVER, BorrowWithinCohort.NEVER);

  static final Coverage COVERAGE = new Coverage("noHeldNodeIsGivenAwayAndEveryHoldEnds");
  static final String IDLE_HELD = "a pass with an idle node under a live hold";
  static final String GREW = "an elastic job grew while a hold was live";
  static final String PREEMPTED = "a preemption while a hold was live";

  @AfterAll
  static void holdsCameUp() {
    COVERAGE.assertSeen(IDLE_HELD, 0.3);
    COVERAGE.assertSeen(GREW, 0.05);
    COVERAGE.assertSeen(PREEMPTED, 0.05);
  }

  static LongStream seeds() {
    return Properties.seeds();
  }

  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void noHeldNodeIsGivenAwayAndEveryHoldEnds(long seed) {
    Properties.check(seed, () -> run(seed, COVERAGE.run()));
  }

  /** A live hold: its nodes, its end. */
  private record Hold(Set<Integer> nodes, long endSec) {}

  private static void run(long seed, Coverage.Run coverage) {
    var random = new SplittableRandom(seed);
    int nodes = 2 + random.nextInt(5);
    int perNode = random.nextBoolean() ? 4 : 8;
    Cluster cluster = Clusters.oneRack(nodes, perNode);
    var policy = Policy.ALL.get(random.nextInt(Policy.ALL.size()));
    var config =
        TenancyConfig.ofQueues(
            List.of(
                new QueueSpec(
                    "a",
                    null,
                    Map.of(GPU, ResourceQuota.of((long) nodes * perNode)),
                    WITHIN_QUEUE,
                    QueueDefaults.NONE)));
    var settings = new Tenants.Settings(ProtectionPolicy.DEFAULT, 30, 0, 0);
    var tenants = new Tenants(config, null, Map.of(), Map.of(), settings);
    var h =
        SchedulerHarness.of(cluster).policy(policy).seed(seed).migration(SETTINGS).tenants(tenants);
    Map<JobId, Hold> holds = new HashMap<>();
    long nextPhantom = 1_000_000;
    long t = 0;
    int steps = 20 + random.nextInt(30);
    for (int step = 0; step < steps; step++) {
      t += 1 + random.nextInt(150);
      h.advanceTo(t);
      final long now = t;
      holds.values().removeIf(hold -> hold.endSec() <= now - 1_000); // long gone: forget
      for (int i = random.nextInt(3); i > 0; i--) {
        int gpus;
        Jobs.Builder job;
        switch (random.nextInt(3)) {
          case 0 -> job = Jobs.gpus(1 + random.nextInt(perNode));
          case 1 -> {
            gpus = perNode * (1 + random.nextInt(Math.min(2, nodes)));
            job = Jobs.perNode(gpus, perNode);
          }
          default -> job = Jobs.elastic(perNode, perNode * (1 + random.nextInt(nodes)), perNode);
        }
        h.submitAt(t, job.queue("a").priority(random.nextInt(3)).limit(50 + random.nextInt(900)));
      }
      if (random.nextInt(3) == 0) {
        // A new hold on 1-2 nodes, for a job moved in from elsewhere or a waiting job.
        JobId holder = JobId.of(nextPhantom++);
        var waiting = new ArrayList<JobId>();
        for (var j : h.jobs()) {
          if (j.state() == SchedulerHarness.JobState.PENDING && !holds.containsKey(j.id())) {
            waiting.add(j.id());
          }
        }
        if (!waiting.isEmpty() && random.nextBoolean()) {
          holder = waiting.get(random.nextInt(waiting.size()));
        }
        var held = new HashSet<Integer>();
        for (int k = 1 + random.nextInt(2); k > 0; k--) {
          int node = random.nextInt(nodes);
          if (holds.values().stream().noneMatch(o -> o.nodes().contains(node))) {
            held.add(node);
          }
        }
        if (!held.isEmpty()) {
          long end = t + 1 + random.nextInt(400);
          holds.put(holder, new Hold(held, end));
          for (int node : held) {
            h.hold(node, holder, end);
          }
        }
      }
      PassResult pass = h.runPass();
      check(h, cluster, holds, pass, t, coverage);
      // Starts end their holder's hold in the harness; mirror that.
      pass.starts().forEach(s -> holds.remove(s.job()));
      h.commit(pass);
      if (!pass.preemptions().isEmpty()) {
        if (holds.values().stream().anyMatch(o -> o.endSec() > now)) {
          coverage.saw(PREEMPTED);
        }
        // The victims stop at once; the next pass, holds unchanged, starts the preemptor.
        JobId preemptor = pass.preemptions().getFirst().preemptor();
        var preempting = new HashMap<JobId, JobId>();
        for (Decision.Preempt p : pass.preemptions()) {
          preempting.put(p.job(), preemptor);
          h.cancel(p.job());
        }
        // As a driver does: the preemptor of victims that stopped goes first.
        h.tenants(new Tenants(config, null, Map.of(), preempting, settings));
        PassResult after = h.runPass();
        h.tenants(tenants);
        check(h, cluster, holds, after, t, coverage);
        assertThat(after.starts())
            .as("%s: preemptor %s starts once its victims stopped", h.context(), preemptor)
            .anyMatch(s -> s.job().equals(preemptor));
        after.starts().forEach(s -> holds.remove(s.job()));
        h.commit(after);
      }
    }
  }

  private static void check(
      SchedulerHarness h,
      Cluster cluster,
      Map<JobId, Hold> holds,
      PassResult pass,
      long now,
      Coverage.Run coverage) {
    // Which node each live hold keeps, for whom.
    Map<Integer, JobId> live = new HashMap<>();
    holds.forEach(
        (holder, hold) -> {
          if (hold.endSec() > now) {
            hold.nodes().forEach(n -> live.put(n, holder));
          }
        });
    for (int node : live.keySet()) {
      if (h.store().snapshot().freeMask(node) != 0) {
        coverage.saw(IDLE_HELD);
      }
    }
    // 2. Ended holds bind nothing, and the driver is told to end them.
    var expired = h.migrations().expiredAt(now);
    holds.forEach(
        (holder, hold) -> {
          if (hold.endSec() <= now && h.migrations().holders().contains(holder)) {
            assertThat(expired).as("%s: hold of %s ended", h.context(), holder).contains(holder);
          }
        });
    var input = new PassInput(h.store().snapshot(), now, 0, Tenants.none(), h.migrations());
    for (JobId holder : expired) {
      assertThat(input.migrations().held()).doesNotContainValue(holder);
    }
    // 1. No held node given to another job while its hold is live.
    for (Decision.Start s : pass.starts()) {
      assertOff(h, live, s.job(), s.placement(), "start");
    }
    for (Decision.Resize z : pass.resizes()) {
      Placement before = h.store().running(z.job()).orElseThrow().placement();
      var added = new HashSet<Integer>();
      for (int node : z.placement().nodes()) {
        if (before.slotOf(node) < 0) {
          added.add(node);
        }
      }
      if (!added.isEmpty() && !live.isEmpty()) {
        coverage.saw(GREW);
      }
      for (int node : added) {
        assertThat(live.get(node))
            .as("%s: %s grows onto node %d, held", h.context(), z.job(), node)
            .isNull();
      }
    }
    for (Decision.Migrate m : pass.migrations()) {
      assertOff(h, live, m.job(), m.target(), "move");
    }
  }

  private static void assertOff(
      SchedulerHarness h, Map<Integer, JobId> live, JobId job, Placement p, String what) {
    for (int node : p.nodes()) {
      JobId holder = live.get(node);
      assertThat(holder == null || holder.equals(job))
          .as(
              "%s: %s of %s on node %d, held for %s (%s)",
              h.context(), what, job, node, holder, h.migrations())
          .isTrue();
    }
  }
}

package io.kairos.core.sched;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.core.invariant.InvariantChecker;
import io.kairos.core.model.Job;
import io.kairos.core.model.JobId;
import io.kairos.core.model.Placement;
import io.kairos.core.sched.place.GangPlacer;
import io.kairos.core.sched.place.Ledger;
import io.kairos.core.state.ClusterSnapshot;
import io.kairos.testkit.Coverage;
import io.kairos.testkit.Generators;
import io.kairos.testkit.Passes;
import io.kairos.testkit.Properties;
import io.kairos.testkit.RuntimeModel;
import io.kairos.testkit.SchedulerHarness;
import java.util.HashMap;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Invariants over generated clusters and workloads, for every policy, over {@link
 * Properties#seeds()} (200 by default; {@code -Dkairos.propertySeeds=N}). Every failure names the
 * seed and a shrunk case.
 *
 * <p>A property that checks a case only when it comes up (a job that got a reservation, a held job,
 * a job waiting for GPUs) counts the cases it met in a {@link Coverage}; {@link
 * #everyConditionalCaseCameUp} fails when a generator stops producing them.
 */
class SchedulingProperties {
  /** Jobs per generated workload. */
  static final int MAX_JOBS = 30;

  /**
   * Jobs per generated backlog (invariant 4): larger, because broken promises need several
   * reservations to interact, and backlog runs are cheap.
   */
  static final int BACKLOG_JOBS = 40;

  static final Coverage KEPT = new Coverage("backfillNeverDelaysAReservation");
  static final Coverage HEADS_KEPT = new Coverage("conservativeKeepsTheHeadsReservation");
  static final Coverage EXACT = new Coverage("easyReservationsAreExact");
  static final Coverage HOLDS = new Coverage("holdsAndExclusionsAreRespected");
  static final Coverage DIAGNOSIS = new Coverage("diagnosisIsTruthful");

  static final String RESERVED_JOB = "a job that got a reservation, started";
  static final String HELD_JOB = "a pass with a held job pending";
  static final String EXCLUDING_JOB = "a start or reservation of a job that excludes nodes";
  static final String BEGIN_TIME = "a job waiting for its begin time";
  static final String WAITS_FOR_GPUS = "a job waiting for GPUs, checked against what is left";
  static final String NO_PLACEMENT = "a job without a placement, checked against what is left";
  static final String BEHIND_EARLIER = "a job waiting behind an earlier one without backfill";

  /**
   * The conditional checks of each property met their case in enough runs (a run is one seed, or
   * one policy and seed). Each share is about half of what the generators give over the 200 default
   * seeds (in brackets), so that a generator that stops producing a case fails here and a small
   * drift does not.
   */
  @AfterAll
  static void everyConditionalCaseCameUp() {
    KEPT.assertSeen(RESERVED_JOB, 0.45); // (93%)
    HEADS_KEPT.assertSeen(RESERVED_JOB, 0.45); // (93%)
    EXACT.assertSeen(RESERVED_JOB, 0.45); // (93%)
    HOLDS.assertSeen(HELD_JOB, 0.35); // (76%)
    HOLDS.assertSeen(EXCLUDING_JOB, 0.25); // (50%)
    DIAGNOSIS.assertSeen(BEGIN_TIME, 0.35); // (76%)
    DIAGNOSIS.assertSeen(WAITS_FOR_GPUS, 0.35); // (71%)
    DIAGNOSIS.assertSeen(NO_PLACEMENT, 0.15); // (31%)
    DIAGNOSIS.assertSeen(BEHIND_EARLIER, 0.07); // (15%: FCFS only, one policy in five)
  }

  static Stream<Arguments> allPolicies() {
    return Properties.allPoliciesAndSeeds();
  }

  static Stream<Arguments> easy() {
    return Properties.policiesAndSeeds(List.of(Policy.EASY));
  }

  static Stream<Arguments> conservative() {
    return Properties.policiesAndSeeds(List.of(Policy.CONSERVATIVE));
  }

  /**
   * Invariants 1 and 2 after every submission, start and finish (the harness checks the store after
   * each step), and no starvation in a finite workload: every job starts and finishes.
   */
  @ParameterizedTest(name = "{0} seed {1}")
  @MethodSource("allPolicies")
  void invariantsHoldAndEveryJobFinishes(Policy policy, long seed) {
    Properties.check(
        Generators.seeded(seed).randomCase(MAX_JOBS),
        c -> {
          var h = c.harness(policy, RuntimeModel.EXPLICIT).runUntilIdle();
          assertThat(h.unfinished()).as("%s: jobs that never finished", h.context()).isEmpty();
          for (var job : h.jobs()) {
            assertThat(job.startSec().getAsLong()).isGreaterThanOrEqualTo(job.submitSec());
            assertThat(job.startSec().getAsLong())
                .as("%s: %s starts no earlier than it is eligible", h.context(), job)
                .isGreaterThanOrEqualTo(job.eligibleSec());
            assertThat(job.finishSec().getAsLong() - job.startSec().getAsLong())
                .isEqualTo(job.runtimeSec());
          }
        });
  }

  /**
   * Invariant 4: with every job running exactly to its time limit and equal priorities (arrival
   * order), a job that got a reservation in any pass starts no later than the first reservation
   * start it was given, and no later than any later one either.
   */
  @ParameterizedTest(name = "{0} seed {1}")
  @MethodSource("easy")
  void backfillNeverDelaysAReservation(Policy policy, long seed) {
    reservationsAreKept(policy, seed);
  }

  /**
   * Invariant 4 for CONSERVATIVE, as documented: the first reservation of each pass (the head's) is
   * kept across passes. Later reservations hold within their pass only (see {@code
   * ConservativeBackfillTest.laterReservationSlipsWhenAnEarlierReservedJobIsPlacedAfresh}).
   */
  @ParameterizedTest(name = "{0} seed {1}")
  @MethodSource("conservative")
  void conservativeKeepsTheHeadsReservation(Policy policy, long seed) {
    Properties.check(
        Generators.seeded(seed).backlogCase(BACKLOG_JOBS, seed % 2 == 1),
        c -> {
          var run = HEADS_KEPT.run();
          var headPromise = new HashMap<JobId, Long>();
          var h =
              c.harness(policy, RuntimeModel.TIME_LIMIT)
                  .onPass(
                      (in, r) -> {
                        if (!r.reservations().isEmpty()) {
                          var head = r.reservations().getFirst();
                          headPromise.merge(head.job(), head.startSec(), Math::min);
                        }
                      });
          h.commit(h.runPass());
          h.runUntilIdle();
          assertThat(h.unfinished()).as("%s: jobs that never finished", h.context()).isEmpty();
          for (var job : h.jobs()) {
            Long promise = headPromise.get(job.id());
            if (promise != null) {
              run.saw(RESERVED_JOB);
              assertThat(job.startSec().getAsLong())
                  .as("%s: head %s promised t=%d", h.context(), job.id(), promise)
                  .isLessThanOrEqualTo(promise);
            }
          }
        });
  }

  private static void reservationsAreKept(Policy policy, long seed) {
    Properties.check(
        Generators.seeded(seed).backlogCase(BACKLOG_JOBS, seed % 2 == 1),
        c -> {
          var run = KEPT.run();
          var earliestPromise = new HashMap<JobId, Long>();
          var h =
              c.harness(policy, RuntimeModel.TIME_LIMIT)
                  .onPass(
                      (in, r) -> {
                        for (var reserve : r.reservations()) {
                          assertThat(reserve.startSec())
                              .as("reservation of %s in the future", reserve.job())
                              .isGreaterThan(in.nowSec());
                          earliestPromise.merge(reserve.job(), reserve.startSec(), Math::min);
                        }
                      });
          h.commit(h.runPass());
          h.runUntilIdle();
          assertThat(h.unfinished()).as("%s: jobs that never finished", h.context()).isEmpty();
          for (var job : h.jobs()) {
            var first = job.firstReservation();
            if (first == null) {
              continue;
            }
            run.saw(RESERVED_JOB);
            long start = job.startSec().getAsLong();
            try {
              InvariantChecker.checkReservationKept(job.id().value(), first.startSec(), start);
              InvariantChecker.checkReservationKept(
                  job.id().value(), earliestPromise.get(job.id()), start);
            } catch (IllegalStateException e) {
              throw new AssertionError(
                  h.context()
                      + ": "
                      + e.getMessage()
                      + " ("
                      + job
                      + ", earliest promise "
                      + earliestPromise.get(job.id())
                      + ")",
                  e);
            }
          }
        });
  }

  /**
   * EASY's reservations are exact, not only kept: with every job running to its limit, a job that
   * got a reservation starts exactly at the first reservation start it was given (the availability
   * profile is neither optimistic nor pessimistic).
   */
  @ParameterizedTest(name = "{0} seed {1}")
  @MethodSource("easy")
  void easyReservationsAreExact(Policy policy, long seed) {
    Properties.check(
        Generators.seeded(seed).backlogCase(BACKLOG_JOBS, seed % 2 == 1),
        c -> {
          var run = EXACT.run();
          var h = c.harness(policy, RuntimeModel.TIME_LIMIT).runUntilIdle();
          for (var job : h.jobs()) {
            if (job.firstReservation() != null) {
              run.saw(RESERVED_JOB);
              assertThat(job.startSec())
                  .as("%s: %s", h.context(), job)
                  .hasValue(job.firstReservation().startSec());
            }
          }
        });
  }

  private static void checkNothingLeftFits(PassInput in, PassResult r, Coverage.Run run) {
    var snapshot = in.snapshot();
    var ledger = new Ledger(snapshot, in.nowSec());
    var pending = new HashMap<JobId, Job>();
    for (int i = 0; i < snapshot.pendingCount(); i++) {
      pending.put(snapshot.pending(i).id(), snapshot.pending(i));
    }
    for (var start : r.starts()) {
      var p = start.placement();
      int[] tasks = new int[p.nodeCount()];
      for (int i = 0; i < tasks.length; i++) {
        tasks[i] = p.tasksOn(i);
      }
      ledger.start(
          pending.get(start.job()), Placement.of(p.nodes(), tasks, new long[tasks.length]));
    }
    var cluster = snapshot.cluster();
    var placer = new GangPlacer(cluster);
    var d = r.diagnosis();
    for (int rank = 0; rank < d.size(); rank++) {
      var reason = d.reason(rank).orElse(null);
      var job = d.job(rank);
      var gang = job.spec().gang();
      if (reason == Reason.INSUFFICIENT_GPUS) {
        run.saw(WAITS_FOR_GPUS);
        assertThat((long) gang.totalGpus())
            .as("t=%d: job %s waits for GPUs", in.nowSec(), job.id())
            .isGreaterThan(ledger.freeTotal());
      } else if (reason == Reason.NO_PLACEMENT) {
        run.saw(NO_PLACEMENT);
        long[] excluded = cluster.excludedMask(job.spec().excludedNodes());
        int modelId = cluster.modelIdOf(job.spec().gpuModel());
        assertThat(placer.place(gang, modelId, ledger.now(0), true, excluded))
            .as("t=%d: job %s has no placement (%s)", in.nowSec(), job.id(), gang)
            .isNull();
      }
    }
  }

  /** The same generated workload run twice gives identical start times and command logs. */
  @ParameterizedTest(name = "{0} seed {1}")
  @MethodSource("allPolicies")
  void sameWorkloadGivesTheSameRun(Policy policy, long seed) {
    var c = Generators.seeded(seed).randomCase(MAX_JOBS);
    Properties.check(
        seed,
        () -> {
          var a = c.harness(policy, RuntimeModel.EXPLICIT).runUntilIdle();
          var b = c.harness(policy, RuntimeModel.EXPLICIT).runUntilIdle();
          assertThat(b.startTimes()).isEqualTo(a.startTimes());
          assertThat(b.log()).isEqualTo(a.log());
        });
  }

  /**
   * The same PassInput twice (same snapshot object, and a fresh snapshot of the same state) gives
   * equal decisions and reasons, at every pass of a run.
   */
  @ParameterizedTest(name = "{0} seed {1}")
  @MethodSource("allPolicies")
  void samePassInputGivesEqualDecisions(Policy policy, long seed) {
    Properties.check(
        Generators.seeded(seed).randomCase(MAX_JOBS),
        c -> {
          SchedulerHarness[] self = new SchedulerHarness[1];
          self[0] =
              c.harness(policy, RuntimeModel.EXPLICIT)
                  .onPass(
                      (in, r) -> {
                        var again = new SchedulingPass(policy).run(in);
                        var fresh =
                            new SchedulingPass(policy)
                                .run(
                                    new PassInput(
                                        self[0].store().snapshot(), in.nowSec(), in.seed()));
                        for (var other : List.of(again, fresh)) {
                          assertThat(other.starts())
                              .as("t=%d starts", in.nowSec())
                              .isEqualTo(r.starts());
                          assertThat(other.reservations())
                              .as("t=%d reservations", in.nowSec())
                              .isEqualTo(r.reservations());
                          assertThat(Passes.order(other)).isEqualTo(Passes.order(r));
                          for (var id : Passes.order(r)) {
                            assertThat(Passes.reason(other, id)).isEqualTo(Passes.reason(r, id));
                          }
                        }
                      });
          self[0].runUntilIdle();
        });
  }

  /**
   * Gang all-or-nothing, checked on the decisions themselves: every Start has exactly the gang's
   * tasks and tasks x GPUs-per-task GPUs, the right GPUs on each node, one task per node for
   * per-node gangs, only GPUs free in the snapshot and not taken by another start of the pass;
   * every Reserve names exactly the gang's tasks (no GPUs yet), or no node when it floats.
   */
  @ParameterizedTest(name = "{0} seed {1}")
  @MethodSource("allPolicies")
  void gangsStartAllOrNothing(Policy policy, long seed) {
    Properties.check(
        Generators.seeded(seed).randomCase(MAX_JOBS),
        c ->
            c.harness(policy, RuntimeModel.EXPLICIT)
                .onPass((in, r) -> checkGangs(in.snapshot(), r))
                .runUntilIdle());
  }

  /**
   * A GPU out of service is never placed: with a seeded set of GPUs taken out (some returned and
   * others taken out half-way), no start of any pass uses one, and the snapshot never offers one.
   */
  @ParameterizedTest(name = "{0} seed {1}")
  @MethodSource("allPolicies")
  void outOfServiceGpusAreNeverPlaced(Policy policy, long seed) {
    Properties.check(
        Generators.seeded(seed).randomCase(MAX_JOBS),
        c -> {
          var rnd = new java.util.Random(seed * 31 + 7);
          var h = c.harness(policy, RuntimeModel.EXPLICIT);
          var cluster = c.cluster();
          long[] out = new long[cluster.nodeCount()];
          h.onPass(
              (in, r) -> {
                for (int n = 0; n < cluster.nodeCount(); n++) {
                  assertThat(in.snapshot().freeMask(n) & out[n])
                      .as("snapshot offers an out-of-service GPU of node %d", n)
                      .isZero();
                }
                for (var start : r.starts()) {
                  var p = start.placement();
                  for (int i = 0; i < p.nodeCount(); i++) {
                    assertThat(p.gpuMask(i) & out[p.node(i)])
                        .as("%s placed on an out-of-service GPU of node %d", start, p.node(i))
                        .isZero();
                  }
                }
              });
          toggleSomeGpus(h, rnd, out);
          h.runUntil(h.nowSec() + 600);
          toggleSomeGpus(h, rnd, out);
          h.runUntil(h.nowSec() + 3_600);
        });
  }

  /** Flips about one GPU in six: out of service, or back in. */
  private static void toggleSomeGpus(SchedulerHarness h, java.util.Random rnd, long[] out) {
    var cluster = h.cluster();
    for (int n = 0; n < cluster.nodeCount(); n++) {
      for (int g = 0; g < cluster.gpuCount(n); g++) {
        if (rnd.nextInt(6) == 0) {
          boolean inService = (out[n] & (1L << g)) != 0;
          h.gpuService(n, g, inService);
          out[n] ^= 1L << g;
        }
      }
    }
  }

  private static void checkGangs(ClusterSnapshot snapshot, PassResult r) {
    var pending = new HashMap<JobId, Job>();
    for (int i = 0; i < snapshot.pendingCount(); i++) {
      pending.put(snapshot.pending(i).id(), snapshot.pending(i));
    }
    var cluster = snapshot.cluster();
    long[] taken = new long[cluster.nodeCount()];
    for (var start : r.starts()) {
      var job = pending.remove(start.job());
      assertThat(job).as("started job %s is pending, once", start.job()).isNotNull();
      var gang = job.spec().gang();
      var p = start.placement();
      assertThat(p.totalTasks()).as("tasks of %s", job.id()).isEqualTo(gang.tasks());
      assertThat(Passes.gpus(p)).as("GPUs of %s", job.id()).isEqualTo(gang.totalGpus());
      for (int i = 0; i < p.nodeCount(); i++) {
        int node = p.node(i);
        long mask = p.gpuMask(i);
        assertThat(Long.bitCount(mask)).isEqualTo(p.tasksOn(i) * gang.shape().gpus());
        if (gang.distinctNodes()) {
          assertThat(p.tasksOn(i)).as("per-node gang %s on node %d", job.id(), node).isEqualTo(1);
        }
        assertThat(mask & ~snapshot.freeMask(node)).as("only free GPUs on node %d", node).isZero();
        assertThat(mask & taken[node]).as("GPUs on node %d started twice", node).isZero();
        taken[node] |= mask;
      }
    }
    for (var reserve : r.reservations()) {
      var job = pending.get(reserve.job());
      assertThat(job).as("reserved job %s is pending and not started", reserve.job()).isNotNull();
      var gang = job.spec().gang();
      var p = reserve.placement();
      if (p.nodeCount() == 0) {
        // A floating reservation: a count of one-GPU tasks on any node, held on none.
        assertThat(gang.shape().gpus()).isEqualTo(1);
        assertThat(gang.distinctNodes()).isFalse();
        continue;
      }
      assertThat(p.totalTasks()).isEqualTo(gang.tasks());
      for (int i = 0; i < p.nodeCount(); i++) {
        assertThat(p.tasksOn(i) * gang.shape().gpus())
            .isLessThanOrEqualTo(cluster.gpuCount(p.node(i)));
        if (gang.distinctNodes()) {
          assertThat(p.tasksOn(i)).isEqualTo(1);
        }
      }
    }
  }

  /**
   * Holds and exclusions, checked on the decisions themselves: no Start or Reserve for a job before
   * its eligible time, and no node of a Start or Reserve that the job excludes (a reservation is
   * for nodes the job may use). The store re-checks both on every start and the harness runs the
   * invariant checker after each, so a job that started early or on an excluded node would also
   * fail there.
   */
  @ParameterizedTest(name = "{0} seed {1}")
  @MethodSource("allPolicies")
  void holdsAndExclusionsAreRespected(Policy policy, long seed) {
    Properties.check(
        Generators.seeded(seed).randomCase(MAX_JOBS),
        c -> {
          var run = HOLDS.run();
          c.harness(policy, RuntimeModel.EXPLICIT)
              .onPass((in, r) -> checkHoldsAndExclusions(in, r, run))
              .runUntilIdle();
        });
  }

  private static void checkHoldsAndExclusions(PassInput in, PassResult r, Coverage.Run run) {
    var snapshot = in.snapshot();
    var pending = new HashMap<JobId, Job>();
    for (int i = 0; i < snapshot.pendingCount(); i++) {
      pending.put(snapshot.pending(i).id(), snapshot.pending(i));
      if (snapshot.pending(i).eligibleSec() > in.nowSec()) {
        run.saw(HELD_JOB);
      }
    }
    var cluster = snapshot.cluster();
    var decisions = new java.util.ArrayList<Decision>(r.starts());
    decisions.addAll(r.reservations());
    for (var decision : decisions) {
      var job = pending.get(decision.job());
      assertThat(job.eligibleSec())
          .as(
              "t=%d: %s for job %s held until t=%d",
              in.nowSec(), decision, job.id(), job.eligibleSec())
          .isLessThanOrEqualTo(in.nowSec());
      var p =
          switch (decision) {
            case Decision.Start s -> s.placement();
            case Decision.Reserve v -> v.placement();
            case Decision.Preempt x ->
                throw new AssertionError("no preemption without tenancy: " + x);
            case Decision.Resize z -> throw new AssertionError("not a start or reservation: " + z);
            case Decision.Migrate m -> throw new AssertionError("not a start or reservation: " + m);
          };
      if (job.spec().hasExclusions()) {
        run.saw(EXCLUDING_JOB);
      }
      for (int i = 0; i < p.nodeCount(); i++) {
        assertThat(job.spec().excludedNodes())
            .as("t=%d: job %s placed on a node it excludes", in.nowSec(), job.id())
            .doesNotContain(cluster.node(p.node(i)).name());
      }
    }
  }

  /**
   * The diagnosis is truthful. It accounts for every pending job once, in the policy's order:
   * started jobs have no reason, reserved ones RESERVED; FCFS makes no reservations and, after the
   * first waiting job, starts nothing; no policy makes more reservations than it allows. And a job
   * that waits because it does not fit (INSUFFICIENT_GPUS, NO_PLACEMENT: reasons that ignore
   * reservations) does not fit what the pass leaves free either: capacity only shrinks during a
   * pass, so a fit at the end means it fit at its turn and should have started (for example, after
   * a wrong failure memo).
   */
  @ParameterizedTest(name = "{0} seed {1}")
  @MethodSource("allPolicies")
  void diagnosisIsTruthful(Policy policy, long seed) {
    Properties.check(
        Generators.seeded(seed).randomCase(MAX_JOBS),
        c -> {
          var run = DIAGNOSIS.run();
          c.harness(policy, RuntimeModel.EXPLICIT)
              .onPass(
                  (in, r) -> {
                    var d = r.diagnosis();
                    assertThat(d.size()).isEqualTo(in.snapshot().pendingCount());
                    assertThat(Passes.order(r)).doesNotHaveDuplicates();
                    assertThat(d.started()).isEqualTo(r.starts().size());
                    assertThat(d.count(Reason.RESERVED)).isEqualTo(r.reservations().size());
                    assertThat(r.reservations().size()).isLessThanOrEqualTo(policy.reservations());
                    boolean waiting = false;
                    for (int rank = 0; rank < d.size(); rank++) {
                      var id = d.job(rank).id();
                      var reason = d.reason(rank);
                      assertThat(reason.isEmpty())
                          .as("%s started iff no reason", id)
                          .isEqualTo(Passes.start(r, id).isPresent());
                      assertThat(reason.filter(x -> x == Reason.RESERVED).isPresent())
                          .isEqualTo(Passes.reservation(r, id).isPresent());
                      boolean held = d.job(rank).eligibleSec() > in.nowSec();
                      if (held) {
                        run.saw(BEGIN_TIME);
                      }
                      assertThat(reason.filter(x -> x == Reason.BEGIN_TIME).isPresent())
                          .as("%s waits for its begin time iff it is held", id)
                          .isEqualTo(held);
                      // The store refuses jobs that can never fit; none reaches a pass.
                      assertThat(reason.orElse(null)).isNotEqualTo(Reason.NEVER_FITS);
                      if (!policy.backfill()) {
                        if (waiting && !held) {
                          run.saw(BEHIND_EARLIER);
                          assertThat(reason).contains(Reason.WAITING_FOR_EARLIER_JOB);
                        }
                        // A held job holds back no one.
                        waiting |= reason.isPresent() && !held;
                      } else {
                        assertThat(reason.orElse(null))
                            .isNotEqualTo(Reason.WAITING_FOR_EARLIER_JOB);
                      }
                    }
                    checkNothingLeftFits(in, r, run);
                  })
              .runUntilIdle();
        });
  }
}

package io.kairos.core.sched;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.core.model.JobId;
import io.kairos.core.model.RunningJob;
import io.kairos.testkit.Generators;
import io.kairos.testkit.Properties;
import io.kairos.testkit.SchedulerHarness;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The migration stage's invariants over generated clusters and workloads in which about half of the
 * jobs declare checkpoints (random checkpoint times), with random protection windows and restart
 * costs, under every policy. Every pass: a move is of a running, checkpointable job out of its
 * protection window, never one that the same pass preempts or resizes; it names the job it serves
 * (a job waiting in the pass's snapshot, or itself for consolidation) and a gain above its cost;
 * its target's GPUs are free after the pass's starts and other moves (no GPU booked twice), and the
 * harness commits it through the reducer (which refuses a GPU held twice) and checks the store
 * after each command.
 */
class MigrationProperties {
  static Stream<Arguments> cases() {
    return Properties.policiesAndSeeds(Policy.ALL)
        .filter(a -> (long) a.get()[1] < Math.max(1, Properties.DEFAULT_SEEDS / 2));
  }

  @ParameterizedTest(name = "{0} seed {1}")
  @MethodSource("cases")
  void movesArePaidForProtectedAndNeverDoubleBook(Policy policy, long seed) {
    run(policy, seed);
  }

  /** The generated workloads do exercise the stage: jobs are moved. */
  @Test
  void theWorkloadsMoveJobs() {
    int moves = 0;
    for (long seed = 0; seed < 40; seed++) {
      moves += run(Policy.EASY, seed);
    }
    assertThat(moves).isPositive();
  }

  /** Runs one generated case to the end, checking every pass; returns the moves. */
  private static int run(Policy policy, long seed) {
    var gen = Generators.seeded(seed);
    var cluster = gen.cluster(2, 16);
    var random = new SplittableRandom(seed ^ 0x5EED);
    var settings = new MigrationSettings(random.nextLong(0, 7_200), random.nextLong(0, 300), 0.3);
    var h = SchedulerHarness.of(cluster).policy(policy).seed(seed).migration(settings);
    Map<JobId, Long> lastMove = new HashMap<>();
    Set<JobId> checkpointable = new HashSet<>();
    int[] moves = new int[1];
    h.onPass(
        (in, result) -> {
          var running = new HashMap<JobId, RunningJob>();
          for (int i = 0; i < in.snapshot().runningCount(); i++) {
            running.put(in.snapshot().running(i).id(), in.snapshot().running(i));
          }
          var pending = new HashSet<JobId>();
          for (var j : in.snapshot().pendingJobs().jobs()) {
            if (j != null) {
              pending.add(j.id());
            }
          }
          var touched = new HashSet<JobId>();
          result.preemptions().forEach(p -> touched.add(p.job()));
          result.resizes().forEach(z -> touched.add(z.job()));
          // What is free once the pass's starts are placed: the targets must come from it.
          long[] free = new long[cluster.nodeCount()];
          for (int n = 0; n < free.length; n++) {
            free[n] = in.snapshot().freeMask(n);
          }
          for (var s : result.starts()) {
            for (int i = 0; i < s.placement().nodeCount(); i++) {
              free[s.placement().node(i)] &= ~s.placement().gpuMask(i);
            }
          }
          for (var m : result.migrations()) {
            moves[0]++;
            RunningJob r = running.get(m.job());
            assertThat(r).as("moved job %s is running", m.job()).isNotNull();
            assertThat(checkpointable).as("moved job declares checkpoints").contains(m.job());
            assertThat(touched).doesNotContain(m.job());
            Long last = lastMove.get(m.job());
            if (last != null) {
              assertThat(in.nowSec() - last)
                  .as("job %s moved again inside its protection window", m.job())
                  .isGreaterThanOrEqualTo(settings.protectionWindowSec());
            }
            lastMove.put(m.job(), in.nowSec());
            assertThat(m.beneficiary()).isNotNull();
            assertThat(m.beneficiary().equals(m.job()) || pending.contains(m.beneficiary()))
                .as("move of %s serves itself or a waiting job, not %s", m.job(), m.beneficiary())
                .isTrue();
            assertThat(m.gainGpuSec()).isGreaterThan(m.costGpuSec());
            assertThat(m.target().totalTasks()).isEqualTo(r.placement().totalTasks());
            for (int i = 0; i < m.target().nodeCount(); i++) {
              int node = m.target().node(i);
              long own = 0;
              int slot = r.placement().slotOf(node);
              if (slot >= 0 && m.consolidates()) {
                own = r.placement().gpuMask(slot); // its own GPUs, free once it stops
              }
              long mask = m.target().gpuMask(i);
              assertThat(Long.bitCount(mask))
                  .isEqualTo(m.target().tasksOn(i) * r.job().spec().gang().shape().gpus());
              assertThat(mask & ~(free[node] | own))
                  .as("t=%d: move of %s to node %d takes GPUs not free", in.nowSec(), m.job(), node)
                  .isZero();
              free[node] &= ~mask;
            }
          }
        });
    List<JobId> ids = h.submitAll(gen.workload(cluster, 40));
    for (JobId id : ids) {
      if (random.nextBoolean()) {
        checkpointable.add(id);
        h.checkpointable(id, random.nextLong(0, 600));
      }
    }
    Properties.check(seed, () -> h.runUntilIdle());
    assertThat(h.unfinished()).as("seed %d: jobs left", seed).isEmpty();
    return moves[0];
  }
}

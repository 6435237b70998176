package io.kairos.core.invariant;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kairos.core.model.Job;
import io.kairos.core.model.JobId;
import io.kairos.core.model.Placement;
import io.kairos.core.model.RunningJob;
import io.kairos.core.state.ClusterStore;
import io.kairos.testkit.Clusters;
import io.kairos.testkit.Jobs;
import io.kairos.testkit.SchedulerHarness;
import java.lang.reflect.Field;
import java.util.Map;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The checker on stores broken in each way it detects. The store refuses every command that would
 * break an invariant, so these states are made by writing its fields directly ({@link Corrupt}):
 * each case breaks one thing, and the rest of the state stays consistent.
 */
class InvariantCheckerTest {
  /** Two nodes of 4 GPUs (n0 and n1); job 1 holds GPUs 0 and 1 of n0. */
  private SchedulerHarness h;

  private ClusterStore store;

  @BeforeEach
  void oneJobRunning() {
    h = SchedulerHarness.of(Clusters.oneRack(2, 4));
    h.occupy(0, 0b0011);
    store = h.store();
    assertThatCode(() -> InvariantChecker.checkStore(store))
        .as("the state before it is broken")
        .doesNotThrowAnyException();
  }

  @Test
  void reservationKeptWhenStartedAtOrBeforeIt() {
    assertThatCode(() -> InvariantChecker.checkReservationKept(1, 100, 100))
        .doesNotThrowAnyException();
    assertThatCode(() -> InvariantChecker.checkReservationKept(1, 100, 50))
        .doesNotThrowAnyException();
  }

  @Test
  void reservationBrokenWhenStartedLater() {
    assertThatThrownBy(() -> InvariantChecker.checkReservationKept(7, 100, 101))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith("invariant 4: job 7");
  }

  @Test
  void aGpuHeldByTwoRunningJobs() {
    Corrupt.run(store, job(2, Jobs.gpus(1)), on(0, 1, 0b0010), 0);

    assertThrows()
        .hasMessageStartingWith("invariant 1: node " + name(0))
        .hasMessageContaining("held by job 2 and another running job");
  }

  @Test
  void aGpuBothFreeAndHeld() {
    Corrupt.freeMask(store)[0] |= 0b0001;

    assertThrows()
        .hasMessageStartingWith("invariant 1: node " + name(0))
        .hasMessageContaining("both free and held");
  }

  @Test
  void theFreeCountOutOfStepWithTheGpusHeld() {
    Corrupt.setFreeGpus(store, store.freeGpus() - 1);

    assertThrows().hasMessageStartingWith("free GPU count 5 disagrees with held GPUs 2");
  }

  @Test
  void aTaskHoldingFewerGpusThanItsShape() {
    Corrupt.run(store, job(2, Jobs.tasks(1, 2)), on(1, 1, 0b0001), 0);

    assertThrows().hasMessageStartingWith("invariant 2: job 2 holds 1 GPUs on node 1");
  }

  @Test
  void aPerNodeGangWithTwoTasksOnOneNode() {
    Corrupt.run(store, job(2, Jobs.perNode(2, 1)), on(1, 2, 0b0011), 0);

    assertThrows()
        .hasMessageStartingWith("invariant 2: job 2 runs 2 tasks on node 1")
        .hasMessageContaining("distinct nodes");
  }

  @Test
  void aGangRunningWithoutAllItsTasks() {
    Corrupt.run(store, job(2, Jobs.gpus(3)), on(1, 2, 0b0011), 0);

    assertThrows().hasMessageStartingWith("invariant 2: job 2 runs 2 of 3 tasks");
  }

  @Test
  void aJobStartedBeforeItsEligibleTime() {
    var held = new Job(JobId.of(2), Jobs.gpus(1).build(), 0, 100);
    Corrupt.run(store, held, on(1, 1, 0b0001), 50);

    assertThrows().hasMessageStartingWith("eligibility: job 2 started at t=50");
  }

  @Test
  void aJobOnANodeItExcludes() {
    Corrupt.run(store, job(2, Jobs.gpus(1).exclude(name(1))), on(1, 1, 0b0001), 0);

    assertThrows().hasMessageStartingWith("exclusion: job 2 runs on node " + name(1));
  }

  /**
   * A run of jobs that share the cluster, checked at every pass (the harness also checks after
   * every step): the checker accepts every state of a correct run, states with jobs running among
   * them, and the run ends with every job finished and every GPU free.
   */
  @Test
  void storeChecksPassThroughAWholeRun() {
    var run = SchedulerHarness.of(Clusters.oneRack(3, 8));
    int[] checkedWithJobsRunning = {0};
    run.onPass(
        (in, r) -> {
          InvariantChecker.checkStore(run.store());
          if (run.store().runningCount() > 0) {
            checkedWithJobsRunning[0]++;
          }
        });
    run.submit(Jobs.perNode(16, 8).limit(10));
    run.submit(Jobs.gpus(5).limit(5));
    run.submit(Jobs.tasks(3, 2).limit(7));

    run.runUntilIdle();

    assertThat(checkedWithJobsRunning[0]).as("states checked with jobs running").isPositive();
    assertThat(run.unfinished()).isEmpty();
    assertThat(run.store().freeGpus()).isEqualTo(run.cluster().totalGpus());
    assertThatCode(() -> InvariantChecker.checkStore(run.store())).doesNotThrowAnyException();
  }

  private AbstractThrowableAssert<?, ? extends Throwable> assertThrows() {
    return assertThatThrownBy(() -> InvariantChecker.checkStore(store))
        .isInstanceOf(IllegalStateException.class);
  }

  private String name(int node) {
    return store.cluster().node(node).name();
  }

  private static Job job(long id, Jobs.Builder spec) {
    return new Job(JobId.of(id), spec.build(), 0);
  }

  private static Placement on(int node, int tasks, long mask) {
    return Placement.of(new int[] {node}, new int[] {tasks}, new long[] {mask});
  }

  /**
   * Writes a store's private fields: the only way to make states its mutators refuse. Each method
   * changes one thing.
   */
  static final class Corrupt {
    private Corrupt() {}

    /**
     * Adds {@code job} as running on {@code placement} from {@code startSec}, taking its GPUs off
     * the free masks and count as a start would, whatever they held.
     */
    static void run(ClusterStore store, Job job, Placement placement, long startSec) {
      @SuppressWarnings("unchecked")
      var running = (Map<JobId, RunningJob>) field(store, "running");
      running.put(job.id(), new RunningJob(job, placement, startSec));
      long[] free = freeMask(store);
      long taken = 0;
      for (int i = 0; i < placement.nodeCount(); i++) {
        taken += Long.bitCount(free[placement.node(i)] & placement.gpuMask(i));
        free[placement.node(i)] &= ~placement.gpuMask(i);
      }
      setFreeGpus(store, store.freeGpus() - taken);
    }

    /** The store's own free-GPU masks, one per node: writes go to the store. */
    static long[] freeMask(ClusterStore store) {
      return (long[]) field(store, "freeMask");
    }

    static void setFreeGpus(ClusterStore store, long gpus) {
      try {
        declared("freeGpus").setLong(store, gpus);
      } catch (IllegalAccessException e) {
        throw new AssertionError(e);
      }
    }

    private static Object field(ClusterStore store, String name) {
      try {
        return declared(name).get(store);
      } catch (IllegalAccessException e) {
        throw new AssertionError(e);
      }
    }

    private static Field declared(String name) {
      try {
        Field f = ClusterStore.class.getDeclaredField(name);
        f.setAccessible(true);
        return f;
      } catch (NoSuchFieldException e) {
        throw new AssertionError("ClusterStore has no field " + name + ": update this test", e);
      }
    }
  }
}

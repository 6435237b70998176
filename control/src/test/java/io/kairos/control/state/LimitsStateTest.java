package io.kairos.control.state;

import static io.kairos.control.state.StateFixtures.T0;
import static io.kairos.control.state.StateFixtures.after;
import static io.kairos.control.state.StateFixtures.array;
import static io.kairos.control.state.StateFixtures.cancel;
import static io.kairos.control.state.StateFixtures.ended;
import static io.kairos.control.state.StateFixtures.gang;
import static io.kairos.control.state.StateFixtures.job;
import static io.kairos.control.state.StateFixtures.register;
import static io.kairos.control.state.StateFixtures.startTasks;
import static io.kairos.control.state.StateFixtures.task;
import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.control.state.ControlCommand.CancelJob;
import io.kairos.control.state.ControlCommand.SetLimits;
import io.kairos.control.state.ControlCommand.SubmitJobs;
import io.kairos.protocol.JobState;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The {@link Limits} in the state machine: submits refused as a whole past a user's or the
 * cluster's count (array elements and large jobs counting more), ended jobs forgotten oldest first
 * beyond {@code maxEndedJobs} (never one still stopping, nor one a waiting dependency names), and
 * all of it deterministic: the same log gives the same state, live, replayed and restored.
 */
class LimitsStateTest {
  static Limits limits(long perUser, long live, long ended) {
    return new Limits(perUser, live, ended, 1 << 20, 1000, 10_000, null);
  }

  static SetLimits set(Limits l) {
    return new SetLimits(T0, l, false);
  }

  static JobRequest as(String user, JobRequest r) {
    return new JobRequest(
        r.name(),
        r.command(),
        r.env(),
        r.workdir(),
        r.gpus(),
        r.gpusPerNode(),
        r.cpus(),
        r.memoryMb(),
        r.timeLimitSec(),
        r.queue(),
        r.priority(),
        r.gpuModel(),
        user,
        r.killSignal(),
        r.graceSec(),
        r.warnSignal(),
        r.warnBeforeSec(),
        r.checkpointDir(),
        r.maxRestarts(),
        r.excludeNodes(),
        r.array(),
        r.dependency(),
        r.output(),
        r.error(),
        r.account(),
        r.priorityClass());
  }

  static JobRequest withEnv(JobRequest r, Map<String, String> env) {
    return new JobRequest(
        r.name(),
        r.command(),
        env,
        r.workdir(),
        r.gpus(),
        r.gpusPerNode(),
        r.cpus(),
        r.memoryMb(),
        r.timeLimitSec(),
        r.queue(),
        r.priority(),
        r.gpuModel(),
        r.user(),
        r.killSignal(),
        r.graceSec(),
        r.warnSignal(),
        r.warnBeforeSec(),
        r.checkpointDir(),
        r.maxRestarts(),
        r.excludeNodes(),
        r.array(),
        r.dependency(),
        r.output(),
        r.error(),
        r.account(),
        r.priorityClass());
  }

  static SubmitJobs grouped(List<Integer> groups, JobRequest... jobs) {
    return new SubmitJobs(T0, List.of(jobs), groups);
  }

  // --- counts ------------------------------------------------------------------------------

  @Test
  void aUserPastItsLimitIsRefusedAsAWholeWhileAnotherUserStillSubmits() {
    var s = new ControlState();
    s.apply(set(limits(3, 100, 1000)));
    var first = s.apply(grouped(List.of(2), as("alice", job(0)), as("alice", job(0))));
    assertThat(first.ids()).containsExactly(1L, 2L);

    // Two more would make four: the whole group is refused, not one of the two.
    var over = s.apply(grouped(List.of(2), as("alice", job(0)), as("alice", job(0))));
    assertThat(over.ids()).isEmpty();
    assertThat(over.refused())
        .singleElement()
        .isEqualTo(new ControlResult.Refusal(0, "maxJobsPerUser", 3, "alice", 2, 2));
    assertThat(s.nextJobId()).as("no id was used").isEqualTo(3);

    // In the same entry, bob's group is admitted.
    var mixed = s.apply(grouped(List.of(1, 1), as("alice", job(0)), as("bob", job(0))));
    assertThat(mixed.ids()).containsExactly(3L, 4L);
    var next = s.apply(grouped(List.of(1, 1), as("alice", job(0)), as("bob", job(0))));
    assertThat(next.ids()).as("alice is full, bob's group still goes in").containsExactly(5L);
    assertThat(next.refused()).extracting(ControlResult.Refusal::group).containsExactly(0);
    assertThat(s.liveWeightOf("alice")).isEqualTo(3);
    assertThat(s.liveWeightOf("bob")).isEqualTo(2);
    assertThat(StateInvariants.violations(s)).isEmpty();
  }

  @Test
  void theClusterCapRefusesEveryoneOnceLiveJobsReachIt() {
    var s = new ControlState();
    s.apply(set(limits(10, 4, 1000)));
    s.apply(grouped(List.of(3), as("alice", job(0)), as("alice", job(0)), as("alice", job(0))));
    var bob = s.apply(grouped(List.of(2), as("bob", job(0)), as("bob", job(0))));
    assertThat(bob.refused())
        .singleElement()
        .isEqualTo(new ControlResult.Refusal(0, "maxLiveJobs", 4, null, 3, 2));
    assertThat(s.apply(grouped(List.of(1), as("bob", job(0)))).ids()).containsExactly(4L);
    // A job that ends makes room.
    s.apply(new CancelJob(T0 + 1, 1, "alice"));
    assertThat(s.apply(grouped(List.of(1), as("bob", job(0)))).ids()).containsExactly(5L);
  }

  @Test
  void arrayElementsCountEachAndLargeJobsCountOncePer4KiB() {
    var s = new ControlState();
    s.apply(set(limits(10, 100, 1000)));
    var big = withEnv(job(0), Map.of("BLOB", "x".repeat(3 * JobSize.WEIGHT_UNIT_BYTES)));
    assertThat(JobSize.weight(big)).isEqualTo(4);
    assertThat(JobSize.weight(job(0))).isEqualTo(1);
    assertThat(s.apply(grouped(List.of(1), as("alice", array("0-7")))).ids()).hasSize(8);
    // 8 + 4 > 10: refused; 8 + 1 + 1 = 10 fits.
    assertThat(s.apply(grouped(List.of(1), as("alice", big))).refused()).hasSize(1);
    assertThat(s.apply(grouped(List.of(2), as("alice", job(0)), as("alice", job(0)))).ids())
        .hasSize(2);
    assertThat(s.liveWeightOf("alice")).isEqualTo(10);
  }

  @Test
  void entriesWithoutGroupsAdmitEachRequestOnItsOwn() {
    var s = new ControlState();
    s.apply(set(limits(2, 100, 1000)));
    var r = s.apply(new SubmitJobs(T0, List.of(job(0), job(0), job(0))));
    assertThat(r.ids()).containsExactly(1L, 2L);
    assertThat(r.refused()).singleElement().satisfies(x -> assertThat(x.group()).isEqualTo(2));
  }

  @Test
  void withoutLimitsNothingIsRefusedAndDefaultsAreSetOnlyOnce() {
    var s = new ControlState();
    var many = new ArrayList<JobRequest>();
    for (int i = 0; i < 50; i++) {
      many.add(job(0));
    }
    assertThat(s.apply(new SubmitJobs(T0, many)).ids()).hasSize(50);
    assertThat(s.limits()).isEmpty();
    var defaults = Limits.forHeap(256L << 20);
    assertThat(s.apply(new SetLimits(T0, defaults, true)).isOk()).isTrue();
    var admin = limits(5, 10, 1000);
    s.apply(set(admin));
    assertThat(s.apply(new SetLimits(T0, defaults, true)).status())
        .as("a second leader's defaults change nothing")
        .isEqualTo(409);
    assertThat(s.limits()).contains(admin);
    // Jobs already in stay; new ones are refused until they end.
    assertThat(s.apply(new SubmitJobs(T0, List.of(job(0)))).ids()).isEmpty();
    assertThat(s.activeJobs()).hasSize(50);
  }

  @Test
  void theHeapDefaultsGrowWithTheHeap() {
    var small = Limits.forHeap(256L << 20);
    var large = Limits.forHeap(16L << 30);
    assertThat(small.maxLiveJobs()).isEqualTo((256L << 20) / 3 / Limits.HEAP_BYTES_PER_WEIGHT);
    assertThat(small.maxJobsPerUser()).isEqualTo(small.maxLiveJobs() / 4);
    assertThat(small.maxEndedJobs()).isEqualTo((256L << 20) / 6 / Limits.HEAP_BYTES_PER_WEIGHT);
    assertThat(large.maxLiveJobs()).isBetween(63 * small.maxLiveJobs(), 65 * small.maxLiveJobs());
    // What live and ended jobs may take at most stays within half the heap.
    long worst = (small.maxLiveJobs() + small.maxEndedJobs()) * Limits.HEAP_BYTES_PER_WEIGHT;
    assertThat(worst).isLessThanOrEqualTo(128L << 20);
  }

  // --- forgetting ended jobs -----------------------------------------------------------------

  @Test
  void theOldestEndedJobsAreForgottenFirstButNotOnesStillStopping() {
    var s = new ControlState();
    s.apply(register("n1", 8));
    s.apply(register("n2", 8));
    for (int i = 0; i < 5; i++) {
      s.apply(new SubmitJobs(T0, List.of(job(0))));
    }
    s.apply(new SubmitJobs(T0, List.of(gang(8, 4)))); // 6
    s.apply(new SubmitJobs(T0, List.of(job(0)))); // 7
    // Job 6, a gang of two tasks, runs; one task fails, the other still runs: it is releasing.
    s.apply(startTasks(6, task(0, "n1", 0, 1, 2, 3), task(1, "n2", 0, 1, 2, 3)));
    s.apply(ended("n1", 1, 6, 1, 0, 3));
    assertThat(s.job(6).orElseThrow().releasing).isTrue();
    // Jobs end in the order 6 (at T0+5000, still stopping), 3, 1, 2.
    s.apply(new CancelJob(T0 + 6000, 3, "alice"));
    s.apply(new CancelJob(T0 + 7000, 1, "alice"));
    s.apply(new CancelJob(T0 + 8000, 2, "alice"));
    assertThat(s.endedWeight()).isEqualTo(4);

    s.apply(set(limits(100, 100, 3)));

    assertThat(s.job(6)).as("still stopping: kept").isPresent();
    assertThat(s.job(3)).as("the oldest ended that let go of its GPUs").isEmpty();
    assertThat(s.job(1)).isPresent();
    assertThat(s.job(2)).isPresent();
    assertThat(s.endedWeight()).isEqualTo(3);
    // Once job 6 has stopped it is the oldest, and goes when the next job ends.
    s.apply(ended("n2", 2, 6, 1, 1, 0));
    assertThat(s.job(6)).isPresent();
    s.apply(new CancelJob(T0 + 9000, 7, "alice"));
    assertThat(s.job(6)).isEmpty();
    assertThat(s.job(1)).isPresent();
    assertThat(s.endedWeight()).isEqualTo(3);
    assertThat(StateInvariants.violations(s)).isEmpty();
    ControlStateTest.assertRoundTrip(s, "after forgetting");
  }

  @Test
  void anEndedJobAWaitingDependencyNamesIsKept() {
    var s = new ControlState();
    s.apply(new SubmitJobs(T0, List.of(job(0), job(0)))); // 1, 2
    s.apply(new SubmitJobs(T0, List.of(after("afterok:1:2")))); // 3 waits for 1 and 2
    s.apply(new SubmitJobs(T0, List.of(job(0)))); // 4
    s.apply(new CancelJob(T0 + 100, 4, "alice"));
    s.apply(new ControlCommand.RegisterNode(T0, StateFixtures.node("n1", 8))); // so 1 may run
    s.apply(set(limits(100, 100, 0)));
    assertThat(s.job(4)).as("nothing waits on job 4").isEmpty();
    assertThat(s.isWaitingOnDependency(3)).isTrue();
    // Job 1 succeeds: job 3 still waits on 2, and job 1 must stay for its verdict.
    s.apply(StateFixtures.start(1, "n1"));
    s.apply(ended("n1", 1, 1, 1, 0, 0));
    assertThat(s.job(1).orElseThrow().state).isEqualTo(JobState.SUCCEEDED);
    assertThat(s.job(1)).isPresent();
    // Job 2 is cancelled: job 3 can never run and is cancelled; then all three may go.
    s.apply(cancel(2));
    assertThat(s.job(1)).isEmpty();
    assertThat(s.job(2)).isEmpty();
    assertThat(s.job(3)).isEmpty();
    assertThat(StateInvariants.violations(s)).isEmpty();
  }

  // --- the property ------------------------------------------------------------------------

  static LongStream seeds() {
    Long one = Long.getLong("kairos.seed");
    return one != null
        ? LongStream.of(one)
        : LongStream.range(0, Long.getLong("kairos.propertySeeds", 300));
  }

  /**
   * Random command sequences with small limits set and changed on the way, two users and grouped
   * submits: the invariants hold after every step (what counts against the limits equals the
   * records, only jobs that must stay are kept beyond maxEndedJobs), an admitted submit never takes
   * a count past its limit, a refused one makes no job and uses no id, and replay and a snapshot
   * round trip give the same state.
   */
  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void randomCommandsWithLimitsKeepTheInvariants(long seed) {
    var gen = new LimitedGenerator(seed, true);
    var state = new ControlState();
    var log = new ArrayList<ControlCommand>();
    for (int step = 0; step < 150; step++) {
      ControlCommand c = gen.next(state);
      log.add(c);
      long nextId = state.nextJobId();
      long liveBefore = state.liveWeight();
      var limits = state.limits().orElse(null);
      ControlResult r = state.apply(c);
      var violations = StateInvariants.violations(state);
      if (c instanceof SubmitJobs sj) {
        long accepted = acceptedJobs(sj, r);
        var expected = LongStream.range(nextId, nextId + accepted).boxed().toList();
        if (!r.ids().equals(expected)) {
          violations.add("submit gave ids " + r.ids() + ", expected " + expected);
        }
        if (limits != null
            && !r.ids().isEmpty()
            && state.liveWeight() > Math.max(limits.maxLiveJobs(), liveBefore)) {
          violations.add("live weight " + state.liveWeight() + " past " + limits.maxLiveJobs());
        }
      }
      assertThat(violations)
          .as(
              "seed %d, step %d, after %s%nreplay: -Dtest=LimitsStateTest -Dkairos.seed=%d%n%s",
              seed, step, c, seed, ControlStateTest.describe(log))
          .isEmpty();
    }
    ControlStateTest.assertRoundTrip(state, "seed " + seed);
    var replayed = new ControlState();
    log.forEach(replayed::apply);
    assertThat(ControlStateTest.imageJson(replayed))
        .as("replay of seed %d", seed)
        .isEqualTo(ControlStateTest.imageJson(state));
  }

  /**
   * Forgetting ended jobs changes nothing else: the same random log with and without a small {@code
   * maxEndedJobs} (and no count limits) leaves every job the first state keeps exactly as the
   * second has it, and the same jobs active.
   */
  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void forgettingEndedJobsOnlyForgets(long seed) {
    var gen = new LimitedGenerator(seed, false);
    var forgetting = new ControlState();
    forgetting.apply(set(limits(Limits.MAX_COUNT, Limits.MAX_COUNT, new Random(seed).nextInt(4))));
    var keeping = new ControlState();
    for (int step = 0; step < 150; step++) {
      ControlCommand c = gen.next(keeping);
      if (namesForgottenJobs(c, forgetting)) {
        continue; // the API refuses a dependency on a job it no longer knows (400)
      }
      forgetting.apply(c);
      keeping.apply(c);
    }
    var kept = jobsJson(keeping);
    var left = jobsJson(forgetting);
    assertThat(kept)
        .as("seed %d: every job kept is as it would be", seed)
        .containsAllEntriesOf(left);
    assertThat(forgetting.activeJobs().stream().map(j -> j.id).toList())
        .isEqualTo(keeping.activeJobs().stream().map(j -> j.id).toList());
    assertThat(StateInvariants.violations(forgetting)).isEmpty();
  }

  /**
   * Whether a submit's dependency names a job {@code s} forgot (or an array some of whose elements
   * it forgot): the API refuses the first, and the state machine cancels the second.
   */
  static boolean namesForgottenJobs(ControlCommand c, ControlState s) {
    if (!(c instanceof SubmitJobs sj)) {
      return false;
    }
    for (JobRequest r : sj.jobs()) {
      if (r.dependency() == null) {
        continue;
      }
      for (long id : r.dependency().jobs()) {
        if (id >= s.nextJobId()) {
          continue; // names a job not yet made: never holds, the same with or without forgetting
        }
        var named = s.job(id).orElse(null);
        if (named == null) {
          return true;
        }
        if (named.array != null && named.array.arrayJobId() == id) {
          for (long e = id; e <= named.array.lastJobId(); e++) {
            if (s.job(e).isEmpty()) {
              return true;
            }
          }
        }
      }
    }
    return false;
  }

  static Map<Long, String> jobsJson(ControlState s) {
    var out = new TreeMap<Long, String>();
    var image = ControlStateTest.imageJson(s);
    image.path("jobs").forEach(j -> out.put(j.path("id").asLong(), j.toString()));
    return out;
  }

  /** How many jobs the groups of {@code c} that were not refused make. */
  static long acceptedJobs(SubmitJobs c, ControlResult r) {
    var refused = new java.util.HashSet<Integer>();
    r.refused().forEach(x -> refused.add(x.group()));
    List<Integer> groups = c.groups();
    int n = groups == null ? c.jobs().size() : groups.size();
    long jobs = 0;
    int at = 0;
    for (int g = 0; g < n; g++) {
      int size = groups == null ? 1 : groups.get(g);
      for (int i = at; i < at + size; i++) {
        if (!refused.contains(g)) {
          jobs += c.jobs().get(i).jobCount();
        }
      }
      at += size;
    }
    return jobs;
  }

  /**
   * {@link ControlStateTest.CommandGenerator}'s commands, with submits spread over two users and
   * grouped at random, and (when {@code setLimits}) small limits set and changed now and then.
   */
  static final class LimitedGenerator {
    private final ControlStateTest.CommandGenerator commands;
    private final Random rnd;
    private final boolean setLimits;

    LimitedGenerator(long seed, boolean setLimits) {
      this.commands = new ControlStateTest.CommandGenerator(seed);
      this.rnd = new Random(seed ^ 0x5DEECE66DL);
      this.setLimits = setLimits;
    }

    ControlCommand next(ControlState s) {
      if (setLimits && rnd.nextInt(12) == 0) {
        return new SetLimits(
            T0,
            limits(1 + rnd.nextInt(8), 1 + rnd.nextInt(14), rnd.nextInt(6)),
            rnd.nextInt(3) == 0);
      }
      ControlCommand c = commands.next(s);
      if (!(c instanceof SubmitJobs sj)) {
        return c;
      }
      var jobs = new ArrayList<JobRequest>();
      for (JobRequest r : sj.jobs()) {
        jobs.add(rnd.nextBoolean() ? r : as("bob", r));
      }
      if (rnd.nextInt(4) == 0) {
        return new SubmitJobs(sj.atMs(), jobs); // as entries before groups
      }
      var groups = new ArrayList<Integer>();
      int left = jobs.size();
      while (left > 0) {
        int g = 1 + rnd.nextInt(left);
        groups.add(g);
        left -= g;
      }
      return new SubmitJobs(sj.atMs(), jobs, groups);
    }
  }
}

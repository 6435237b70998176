package io.kairos.control.state;

import static io.kairos.control.state.StateFixtures.T0;
import static io.kairos.control.state.StateFixtures.after;
import static io.kairos.control.state.StateFixtures.job;
import static io.kairos.control.state.StateFixtures.register;
import static io.kairos.control.state.StateFixtures.restartable;
import static io.kairos.control.state.StateFixtures.task;
import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.control.state.ControlCommand.Start;
import io.kairos.control.state.ControlCommand.StartJobs;
import io.kairos.control.state.ControlCommand.SubmitJobs;
import io.kairos.control.state.ControlCommand.TaskEnded;
import io.kairos.control.state.ControlCommand.TasksEnded;
import io.kairos.protocol.agent.ExitReason;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.LongStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A {@link TasksEnded} entry (task ends packed by group commit) does exactly what its ends would as
 * entries of their own: the same answer for each, in order, and the same state to the byte, before
 * and after the next command that reads the scheduler's store. Generated bursts mix successes,
 * failures (a restartable gang restarts, a dependency is settled), kills, duplicates, stale
 * attempts and epochs, wrong nodes and unknown jobs.
 */
class TasksEndedProperties {
  /** Seeds 0..199; {@code -Dkairos.propertySeed=S} replays one. */
  static LongStream seeds() {
    String only = System.getProperty("kairos.propertySeed");
    return only == null || only.isBlank()
        ? LongStream.range(0, 200)
        : LongStream.of(Long.parseLong(only.trim()));
  }

  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void aPackedBurstAppliesAsItsEndsOneByOne(long seed) {
    var rnd = new Random(seed);
    ControlState separate = running();
    ControlState packed = running();
    List<TaskEnded> burst = burst(rnd, separate);

    var one = new ArrayList<ControlResult>();
    for (TaskEnded e : burst) {
      one.add(separate.apply(e));
    }
    long at = burst.stream().mapToLong(TaskEnded::atMs).max().orElseThrow();
    ControlResult all = packed.apply(new TasksEnded(at, burst));

    String replay = "seed " + seed + " (-Dkairos.propertySeed=" + seed + "): ";
    assertThat(all.isOk()).as(replay + "the entry").isTrue();
    assertThat(all.items()).as(replay + "each one's answer").isEqualTo(one);
    assertThat(RegisterNodesProperties.image(packed))
        .as(replay + "the state")
        .isEqualTo(RegisterNodesProperties.image(separate));
    var next = StateFixtures.submit(job(1));
    assertThat(packed.apply(next)).as(replay + "the next command").isEqualTo(separate.apply(next));
    assertThat(RegisterNodesProperties.image(packed))
        .as(replay + "the state after it")
        .isEqualTo(RegisterNodesProperties.image(separate));
    assertThat(StateInvariants.violations(packed)).as(replay + "invariants").isEmpty();
  }

  /**
   * An {@link ControlCommand.AddTokens} entry (step credentials packed by group commit) adds, or
   * refuses, each token as an {@link ControlCommand.AddToken} entry of its own would: credentials
   * of running attempts, of stale attempts, of unknown jobs, and plain tokens.
   */
  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void packedTokensApplyAsTheirTokensOneByOne(long seed) {
    var rnd = new Random(seed);
    ControlState separate = running();
    ControlState packed = running();
    var tokens = new ArrayList<TokenRecord>();
    tokens.add(TokenRecord.stepCredential("step-" + seed, "alice", T0, TokenRecord.jobScope(7, 1)));
    for (int i = 0, n = 2 + rnd.nextInt(20); i < n; i++) {
      long jobId = rnd.nextInt(10) == 0 ? 99 : 1 + rnd.nextInt(8);
      int attempt = rnd.nextInt(5) == 0 ? 2 : 1;
      tokens.add(
          rnd.nextInt(6) == 0
              ? new TokenRecord("plain-" + seed + "-" + i, "alice", TokenRecord.USER, T0)
              : TokenRecord.stepCredential(
                  "step-" + seed + "-" + i, "alice", T0, TokenRecord.jobScope(jobId, attempt)));
    }
    var one = new ArrayList<ControlResult>();
    for (TokenRecord t : tokens) {
      one.add(separate.apply(new ControlCommand.AddToken(T0 + 6_000, t)));
    }
    ControlResult all = packed.apply(new ControlCommand.AddTokens(T0 + 6_000, tokens));
    String replay = "seed " + seed + ": ";
    assertThat(all.items()).as(replay + "each one's answer").isEqualTo(one);
    assertThat(RegisterNodesProperties.image(packed))
        .as(replay + "the state")
        .isEqualTo(RegisterNodesProperties.image(separate));
  }

  /** The generator makes the cases that matter: bursts that end jobs, and ends that are refused. */
  @org.junit.jupiter.api.Test
  void generatedBurstsEndJobsAndHoldRefusals() {
    long ending = 0;
    long refusing = 0;
    for (long seed = 0; seed < 200; seed++) {
      ControlState s = running();
      long liveBefore = s.activeJobs().size();
      boolean refused = false;
      for (TaskEnded e : burst(new Random(seed), s)) {
        refused |= !s.apply(e).isOk();
      }
      ending += s.activeJobs().size() < liveBefore ? 1 : 0;
      refusing += refused ? 1 : 0;
    }
    assertThat(ending).isGreaterThan(100);
    assertThat(refusing).isBetween(10L, 195L);
  }

  /**
   * Two 8-GPU nodes; jobs 1-3 run on n1, 4-6 on n2, one GPU each; job 7, a gang that may restart
   * twice, runs over both; job 8 waits for job 1 to succeed.
   */
  static ControlState running() {
    var s = new ControlState();
    s.apply(register("n1", 8));
    s.apply(register("n2", 8));
    var jobs = new ArrayList<JobRequest>();
    for (int i = 0; i < 6; i++) {
      jobs.add(job(1));
    }
    jobs.add(restartable(8, 4, 2));
    jobs.add(after("afterok:1"));
    s.apply(new SubmitJobs(T0, jobs));
    var starts = new ArrayList<Start>();
    for (int j = 1; j <= 6; j++) {
      starts.add(new Start(j, List.of(task(0, j <= 3 ? "n1" : "n2", (j - 1) % 3))));
    }
    starts.add(new Start(7, List.of(task(0, "n1", 4, 5, 6, 7), task(1, "n2", 4, 5, 6, 7))));
    s.apply(new StartJobs(T0 + 1000, starts));
    return s;
  }

  static List<TaskEnded> burst(Random rnd, ControlState s) {
    long e1 = s.node("n1").orElseThrow().epoch;
    long e2 = s.node("n2").orElseThrow().epoch;
    var out = new ArrayList<TaskEnded>();
    int n = 2 + rnd.nextInt(20);
    for (int i = 0; i < n; i++) {
      long jobId = rnd.nextInt(10) == 0 ? 99 : 1 + rnd.nextInt(7);
      int task = jobId == 7 ? rnd.nextInt(2) : 0;
      String node = jobId == 7 ? (task == 0 ? "n1" : "n2") : jobId <= 3 ? "n1" : "n2";
      if (rnd.nextInt(8) == 0) {
        node = node.equals("n1") ? "n2" : "n1"; // the wrong node
      }
      long epoch = node.equals("n1") ? e1 : e2;
      if (rnd.nextInt(10) == 0) {
        epoch--; // a stale epoch
      }
      int attempt = rnd.nextInt(6) == 0 ? 2 : 1;
      int exit;
      ExitReason reason = null;
      switch (rnd.nextInt(4)) {
        case 0, 1 -> exit = 0;
        case 2 -> exit = 1;
        default -> {
          exit = 137;
          reason = ExitReason.KILLED;
        }
      }
      out.add(new TaskEnded(T0 + 5_000 + i, node, epoch, jobId, attempt, task, exit, reason, null));
    }
    return out;
  }
}

package io.kairos.control.state;

import static io.kairos.control.state.StateFixtures.T0;
import static io.kairos.control.state.StateFixtures.after;
import static io.kairos.control.state.StateFixtures.array;
import static io.kairos.control.state.StateFixtures.cancel;
import static io.kairos.control.state.StateFixtures.drain;
import static io.kairos.control.state.StateFixtures.ended;
import static io.kairos.control.state.StateFixtures.gang;
import static io.kairos.control.state.StateFixtures.job;
import static io.kairos.control.state.StateFixtures.register;
import static io.kairos.control.state.StateFixtures.restartable;
import static io.kairos.control.state.StateFixtures.resume;
import static io.kairos.control.state.StateFixtures.start;
import static io.kairos.control.state.StateFixtures.startTasks;
import static io.kairos.control.state.StateFixtures.submit;
import static io.kairos.control.state.StateFixtures.task;
import static io.kairos.control.state.StateFixtures.token;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.kairos.control.raft.CommandCodec;
import io.kairos.control.state.ControlCommand.DrainNode;
import io.kairos.control.state.ControlCommand.NodeDown;
import io.kairos.control.state.ControlCommand.RegisterNode;
import io.kairos.control.state.ControlCommand.Start;
import io.kairos.control.state.ControlCommand.StartJobs;
import io.kairos.control.state.ControlCommand.SubmitJobs;
import io.kairos.control.state.ControlCommand.TaskEnded;
import io.kairos.core.model.JobId;
import io.kairos.protocol.JobState;
import io.kairos.protocol.NodeState;
import io.kairos.protocol.TaskPlacement;
import io.kairos.protocol.agent.ExitReason;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link ControlState#apply} as a table of transitions (given, when, then), its snapshot round
 * trip, and a seeded property: random command sequences keep the invariants after every step.
 */
class ControlStateTest {
  private static final JsonMapper JSON = JsonMapper.builder().build();

  // --- the table ---------------------------------------------------------------------------

  /**
   * One transition: apply {@code given}, then {@code when}; expect its status and ids, and {@code
   * then} on the state. {@code unchanged}: the records and the store are as before.
   */
  record Scenario(
      String name,
      List<ControlCommand> given,
      ControlCommand when,
      int status,
      List<Long> ids,
      boolean unchanged,
      Consumer<ControlState> then) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Scenario ok(
      String name,
      List<ControlCommand> given,
      ControlCommand when,
      List<Long> ids,
      Consumer<ControlState> then) {
    return new Scenario(name, given, when, 200, ids, false, then);
  }

  /** A start the state must refuse: reported as nothing started, and nothing changes. */
  static Scenario refusedStart(String name, List<ControlCommand> given, StartJobs when) {
    return new Scenario(name, given, when, 200, List.of(), true, s -> {});
  }

  /** A command the state must answer with {@code status} and ignore. */
  static Scenario ignored(
      String name, List<ControlCommand> given, ControlCommand when, int status) {
    return new Scenario(name, given, when, status, List.of(), true, s -> {});
  }

  static List<ControlCommand> given(ControlCommand... commands) {
    return List.of(commands);
  }

  /** n1 (8 GPUs, epoch 1), n2 (8 GPUs, epoch 2); job 1 runs on n1 GPUs 0-1; job 2 (4) pending. */
  static List<ControlCommand> oneRunning() {
    return given(register("n1", 8), register("n2", 8), submit(2, 4), start(1, "n1", 0, 1));
  }

  static Stream<Scenario> transitions() {
    return Stream.of(
        // submit
        ok(
            "submit numbers jobs from 1",
            given(),
            submit(1, 2, 0),
            List.of(1L, 2L, 3L),
            s -> assertThat(s.nextJobId()).isEqualTo(4)),
        ok(
            "a later submit goes on from the last id",
            given(submit(1, 1)),
            submit(3),
            List.of(3L),
            s -> assertThat(jobOf(s, 3).state).isEqualTo(JobState.PENDING)),
        ok(
            "a job no node can hold waits aside as unplaceable",
            given(register("n1", 8)),
            submit(job("big", 16, 0, "")),
            List.of(1L),
            s -> assertThat(s.isUnplaceable(1)).isTrue()),
        ok(
            "a job submitted before any node is unplaceable until one registers (and the store"
                + " is settled: at the next command, or the scheduler's SettleNodes)",
            given(submit(2)),
            register("n1", 8),
            List.of(1L),
            s -> {
              assertThat(s.storeIsStale()).isTrue();
              assertThat(s.isUnplaceable(1)).isTrue();
              s.apply(new ControlCommand.SettleNodes(T0 + 1));
              assertThat(s.isUnplaceable(1)).isFalse();
              assertThat(s.store().pending(JobId.of(1))).isPresent();
            }),
        // register
        ok(
            "registering a node gives epoch 1",
            given(),
            register("n1", 8),
            List.of(1L),
            s -> assertThat(node(s, "n1").epoch).isEqualTo(1)),
        ok(
            "each registration takes the next epoch",
            given(register("n1", 8), register("n2", 4)),
            register("n1", 8),
            List.of(3L),
            s -> {
              assertThat(node(s, "n1").epoch).isEqualTo(3);
              assertThat(node(s, "n2").epoch).isEqualTo(2);
            }),
        ok(
            "re-registering requeues the node's running jobs",
            oneRunning(),
            register("n1", 8),
            List.of(3L),
            s -> {
              var j = jobOf(s, 1);
              assertThat(j.state).isEqualTo(JobState.PENDING);
              assertThat(j.requeues).isEqualTo(1);
              assertThat(j.attempt).isEqualTo(1);
              assertThat(j.placement).isEmpty();
              assertThat(s.store().pending(JobId.of(1))).isPresent();
              assertThat(s.store().freeMask(index(s, "n1"))).isEqualTo(0xFFL);
            }),
        ok(
            "re-registering another node leaves the running job alone",
            oneRunning(),
            register("n2", 8),
            List.of(3L),
            s -> assertThat(jobOf(s, 1).state).isEqualTo(JobState.RUNNING)),
        ok(
            "a job requeued for its lost node starts again at once the first time (no backoff)",
            concat(oneRunning(), register("n1", 8)),
            start(1, "n2", 6, 7),
            List.of(1L),
            s -> {
              assertThat(jobOf(s, 1).attempt).isEqualTo(2);
              assertThat(jobOf(s, 1).placement).containsExactly(task(0, "n2", 6, 7));
            }),
        refusedStart(
            "a job that loses its node again does not start before its backoff",
            concat(
                oneRunning(),
                register("n3", 8),
                register("n1", 8),
                start(1, "n2", 6, 7),
                register("n2", 8)),
            start(1, "n3", 6, 7)),
        ok(
            "... and starts again as attempt 3 after it (away from both lost nodes)",
            concat(
                oneRunning(),
                register("n3", 8),
                register("n1", 8),
                start(1, "n2", 6, 7),
                register("n2", 8)),
            new StartJobs(T0 + 10_000, List.of(new Start(1, List.of(task(0, "n3", 6, 7))))),
            List.of(1L),
            s -> {
              assertThat(jobOf(s, 1).attempt).isEqualTo(3);
              assertThat(jobOf(s, 1).requeues).isEqualTo(2);
            }),
        // Found by the property (seed 327): apply threw "state and store disagree" here.
        ok(
            "a running CPU-only job that names a GPU model survives the model's node leaving",
            given(
                register("n1", 8),
                new RegisterNode(T0, StateFixtures.node("n2", 8, "A100")),
                submit(job("cpu", 0, 0, "A100")),
                start(1, "n1")),
            new RegisterNode(T0, StateFixtures.node("n2", 0, "A100")),
            List.of(3L),
            s -> assertThat(jobOf(s, 1).state).isEqualTo(JobState.RUNNING)),
        // node failure, health, restarts
        ok(
            "a node found down: its epoch is fenced, its job requeued not before the lease ends",
            oneRunning(),
            new NodeDown(T0 + 6_000, "n1", 1, "no heartbeat for 5.4 s", T0 + 11_000),
            List.of(),
            s -> {
              var n = node(s, "n1");
              assertThat(n.state).isEqualTo(NodeState.DOWN);
              assertThat(n.reason).contains("no heartbeat");
              assertThat(n.epoch).isEqualTo(3);
              assertThat(s.store().isCordoned(index(s, "n1"))).isTrue();
              var j = jobOf(s, 1);
              assertThat(j.state).isEqualTo(JobState.PENDING);
              assertThat(j.requeues).isEqualTo(1);
              assertThat(j.eligibleMs).isGreaterThanOrEqualTo(T0 + 11_000);
              assertThat(j.message).contains("n1 is down");
              assertThat(s.store().pending(JobId.of(1)).orElseThrow().eligibleSec())
                  .isEqualTo(Math.floorDiv(j.eligibleMs + 999, 1000));
            }),
        ignored(
            "a node-down report for an older epoch changes nothing",
            oneRunning(),
            new NodeDown(T0 + 6_000, "n1", 0, "late", T0 + 11_000),
            409),
        ok(
            "a gang that lost one node keeps its GPUs on the other until that task stops",
            given(
                register("n1", 8),
                register("n2", 8),
                submit(gang(4, 2)),
                startTasks(1, task(0, "n1", 0, 1), task(1, "n2", 0, 1))),
            new NodeDown(T0 + 6_000, "n1", 1, "lost", T0 + 11_000),
            List.of(),
            s -> {
              var j = jobOf(s, 1);
              assertThat(j.state).isEqualTo(JobState.RUNNING);
              assertThat(j.requeueing).isTrue();
              assertThat(j.taskExits).containsExactly(ControlState.LOST_EXIT_CODE, null);
              assertThat(s.store().freeMask(index(s, "n2"))).isEqualTo(0xFCL);
            }),
        ok(
            "... and goes back to pending once it has",
            given(
                register("n1", 8),
                register("n2", 8),
                submit(gang(4, 2)),
                startTasks(1, task(0, "n1", 0, 1), task(1, "n2", 0, 1)),
                new NodeDown(T0 + 6_000, "n1", 1, "lost", T0 + 11_000)),
            new TaskEnded(T0 + 7_000, "n2", 2, 1, 1, 1, 143, ExitReason.KILLED, "job requeued"),
            List.of(),
            s -> {
              var j = jobOf(s, 1);
              assertThat(j.state).isEqualTo(JobState.PENDING);
              assertThat(j.requeueing).isFalse();
              assertThat(s.store().freeMask(index(s, "n2"))).isEqualTo(0xFFL);
            }),
        // batch jobs (sbatch): task 0 runs the script, the other tasks hold the allocation
        ok(
            "a batch job ends with its script; the holders' GPUs stay held until they stop",
            given(
                register("n1", 8),
                register("n2", 8),
                submit(StateFixtures.batch(2, 2)),
                startTasks(1, task(0, "n1", 0, 1), task(1, "n2", 0, 1))),
            ended("n1", 1, 1, 1, 0, 0),
            List.of(),
            s -> {
              var j = jobOf(s, 1);
              assertThat(j.state).isEqualTo(JobState.SUCCEEDED);
              assertThat(j.exitCode).isZero();
              assertThat(j.releasing).isTrue();
              assertThat(s.store().freeMask(index(s, "n1"))).isEqualTo(0xFFL);
              assertThat(s.store().freeMask(index(s, "n2"))).isEqualTo(0xFCL);
            }),
        ok(
            "... and frees them once the holder is stopped, still SUCCEEDED",
            given(
                register("n1", 8),
                register("n2", 8),
                submit(StateFixtures.batch(2, 2)),
                startTasks(1, task(0, "n1", 0, 1), task(1, "n2", 0, 1)),
                ended("n1", 1, 1, 1, 0, 0)),
            new TaskEnded(T0 + 7_000, "n2", 2, 1, 1, 1, 143, ExitReason.KILLED, "job ended"),
            List.of(),
            s -> {
              var j = jobOf(s, 1);
              assertThat(j.state).isEqualTo(JobState.SUCCEEDED);
              assertThat(j.exitCode).isZero();
              assertThat(s.store().freeMask(index(s, "n1"))).isEqualTo(0xFFL);
              assertThat(s.store().freeMask(index(s, "n2"))).isEqualTo(0xFFL);
            }),
        ok(
            "a batch script's exit code is the job's",
            given(
                register("n1", 8),
                register("n2", 8),
                submit(StateFixtures.batch(2, 2)),
                startTasks(1, task(0, "n1", 0, 1), task(1, "n2", 0, 1))),
            ended("n1", 1, 1, 1, 0, 3),
            List.of(),
            s -> {
              var j = jobOf(s, 1);
              assertThat(j.state).isEqualTo(JobState.FAILED);
              assertThat(j.exitCode).isEqualTo(3);
              assertThat(s.store().freeMask(index(s, "n2"))).isEqualTo(0xFCL);
            }),
        ok(
            "a gang that is no batch job runs on when its task 0 exits 0",
            given(
                register("n1", 8),
                register("n2", 8),
                submit(gang(4, 2)),
                startTasks(1, task(0, "n1", 0, 1), task(1, "n2", 0, 1))),
            ended("n1", 1, 1, 1, 0, 0),
            List.of(),
            s -> assertThat(jobOf(s, 1).state).isEqualTo(JobState.RUNNING)),
        ok(
            "a failed task with restarts left requeues the job away from that node",
            given(
                register("n1", 8),
                register("n2", 8),
                submit(restartable(2, 0, 2)),
                start(1, "n1", 0, 1)),
            new TaskEnded(T0 + 5_000, "n1", 1, 1, 1, 0, 3, null, null),
            List.of(),
            s -> {
              var j = jobOf(s, 1);
              assertThat(j.state).isEqualTo(JobState.PENDING);
              assertThat(j.restarts).isEqualTo(1);
              assertThat(j.message).contains("exited with code 3").contains("restart 1 of 2");
              assertThat(j.avoidNodes).containsExactly("n1");
              assertThat(s.store().pending(JobId.of(1)).orElseThrow().spec().excludedNodes())
                  .containsExactly("n1");
            }),
        ok(
            "a failed task with no restarts left fails the job",
            given(register("n1", 8), submit(restartable(2, 0, 0)), start(1, "n1", 0, 1)),
            new TaskEnded(T0 + 5_000, "n1", 1, 1, 1, 0, 3, null, null),
            List.of(),
            s -> assertThat(jobOf(s, 1).state).isEqualTo(JobState.FAILED)),
        ok(
            "a task refused by an unhealthy node requeues its job, whatever its restarts",
            given(
                register("n1", 8),
                register("n2", 8),
                submit(restartable(2, 0, 0)),
                start(1, "n1", 0, 1)),
            new TaskEnded(T0 + 5_000, "n1", 1, 1, 1, 0, 127, ExitReason.NODE_UNHEALTHY, "ECC"),
            List.of(),
            s -> {
              var j = jobOf(s, 1);
              assertThat(j.state).isEqualTo(JobState.PENDING);
              assertThat(j.restarts).isZero();
              assertThat(j.avoidNodes).containsExactly("n1");
            }),
        ok(
            "a job is not kept away from the only node that can run it",
            given(register("n1", 8), submit(restartable(2, 0, 1)), start(1, "n1", 0, 1)),
            new TaskEnded(T0 + 5_000, "n1", 1, 1, 1, 0, 3, null, null),
            List.of(),
            s -> {
              assertThat(jobOf(s, 1).state).isEqualTo(JobState.PENDING);
              assertThat(jobOf(s, 1).avoidNodes).isEmpty();
            }),
        ok(
            "two jobs that failed on a node and then succeeded elsewhere make it suspect",
            given(
                register("n1", 8),
                register("n2", 8),
                submit(restartable(1, 0, 1), restartable(1, 0, 1)),
                start(1, "n1", 0),
                start(2, "n1", 1),
                new TaskEnded(T0 + 2_000, "n1", 1, 1, 1, 0, 1, null, null),
                new TaskEnded(T0 + 2_000, "n1", 1, 2, 1, 0, 1, null, null),
                new StartJobs(
                    T0 + 60_000,
                    List.of(
                        new Start(1, List.of(task(0, "n2", 0))),
                        new Start(2, List.of(task(0, "n2", 1))))),
                new TaskEnded(T0 + 70_000, "n2", 2, 1, 2, 0, 0, null, null)),
            new TaskEnded(T0 + 71_000, "n2", 2, 2, 2, 0, 0, null, null),
            List.of(),
            s -> {
              assertThat(jobOf(s, 1).state).isEqualTo(JobState.SUCCEEDED);
              assertThat(jobOf(s, 2).state).isEqualTo(JobState.SUCCEEDED);
              assertThat(node(s, "n1").state).isEqualTo(NodeState.DRAINED);
              assertThat(node(s, "n1").reason).contains("suspect").contains("[1, 2]");
              assertThat(node(s, "n2").state).isEqualTo(NodeState.UP);
            }),
        ok(
            "a job that fails everywhere blames no node",
            given(
                register("n1", 8),
                submit(restartable(2, 0, 1)),
                start(1, "n1", 0, 1),
                new TaskEnded(T0 + 2_000, "n1", 1, 1, 1, 0, 1, null, null),
                new StartJobs(T0 + 60_000, List.of(new Start(1, List.of(task(0, "n1", 0, 1)))))),
            new TaskEnded(T0 + 70_000, "n1", 1, 1, 2, 0, 1, null, null),
            List.of(),
            s -> {
              assertThat(jobOf(s, 1).state).isEqualTo(JobState.FAILED);
              assertThat(node(s, "n1").state).isEqualTo(NodeState.UP);
            }),
        ok(
            "a drain for a failed health check requeues the node's running jobs",
            oneRunning(),
            new DrainNode(T0 + 3_000, "n1", "unhealthy: GPU 3: ECC", true),
            List.of(),
            s -> {
              assertThat(node(s, "n1").state).isEqualTo(NodeState.DRAINED);
              assertThat(node(s, "n1").reason).contains("ECC");
              assertThat(jobOf(s, 1).requeueing).isTrue();
              assertThat(jobOf(s, 1).nextAvoidNodes).containsExactly("n1");
            }),
        ok(
            "an admin's drain lets running jobs finish",
            oneRunning(),
            drain("n1"),
            List.of(),
            s -> assertThat(jobOf(s, 1).requeueing).isFalse()),
        // start
        ok(
            "a start on free GPUs runs the job",
            given(register("n1", 8), submit(2)),
            start(1, "n1", 0, 1),
            List.of(1L),
            s -> {
              var j = jobOf(s, 1);
              assertThat(j.state).isEqualTo(JobState.RUNNING);
              assertThat(j.attempt).isEqualTo(1);
              assertThat(j.startMs).isEqualTo(T0 + 1000);
              assertThat(s.store().freeMask(index(s, "n1"))).isEqualTo(0b1111_1100L);
            }),
        ok(
            "a gang starts on two nodes at once",
            given(register("n1", 8), register("n2", 8), submit(gang(8, 4))),
            startTasks(1, task(0, "n1", 0, 1, 2, 3), task(1, "n2", 4, 5, 6, 7)),
            List.of(1L),
            s -> assertThat(jobOf(s, 1).placement).hasSize(2)),
        ok(
            "of two starts in one command only the valid one runs",
            given(register("n1", 8), submit(2, 2)),
            new StartJobs(
                T0,
                List.of(
                    new Start(1, List.of(task(0, "n1", 0, 1))),
                    new Start(2, List.of(task(0, "n1", 1, 2))))),
            List.of(1L),
            s -> assertThat(jobOf(s, 2).state).isEqualTo(JobState.PENDING)),
        refusedStart(
            "start on an unknown node",
            given(register("n1", 8), submit(2)),
            start(1, "nope", 0, 1)),
        refusedStart(
            "start on a GPU index out of range",
            given(register("n1", 8), submit(2)),
            start(1, "n1", 7, 8)),
        refusedStart(
            "start on a negative GPU index",
            given(register("n1", 8), submit(1)),
            start(1, "n1", -1)),
        refusedStart("start on a GPU already used", oneRunning(), start(2, "n1", 1, 2, 3, 4)),
        refusedStart("start of a job already running", oneRunning(), start(1, "n1", 4, 5)),
        refusedStart(
            "start of a finished job",
            concat(oneRunning(), ended("n1", 1, 1, 1, 0, 0)),
            start(1, "n1", 4, 5)),
        refusedStart(
            "start of a cancelled job",
            given(register("n1", 8), submit(2), cancel(1)),
            start(1, "n1", 0, 1)),
        refusedStart(
            "start of an unknown job", given(register("n1", 8), submit(2)), start(9, "n1", 0, 1)),
        refusedStart(
            "start with fewer GPUs than asked",
            given(register("n1", 8), submit(2)),
            start(1, "n1", 0)),
        refusedStart(
            "start naming a GPU twice", given(register("n1", 8), submit(2)), start(1, "n1", 3, 3)),
        refusedStart(
            "start of a gang with one task missing",
            given(register("n1", 8), register("n2", 8), submit(gang(8, 4))),
            startTasks(1, task(0, "n1", 0, 1, 2, 3))),
        refusedStart(
            "start of a gang with two tasks on one node",
            given(register("n1", 8), submit(gang(8, 4))),
            startTasks(1, task(0, "n1", 0, 1, 2, 3), task(1, "n1", 4, 5, 6, 7))),
        refusedStart(
            "start of a gang with task ranks out of order",
            given(register("n1", 8), register("n2", 8), submit(gang(8, 4))),
            startTasks(1, task(1, "n1", 0, 1, 2, 3), task(0, "n2", 4, 5, 6, 7))),
        refusedStart(
            "start on a node of another GPU model",
            given(
                register("n1", 8),
                new RegisterNode(T0, StateFixtures.node("n2", 8, "A100")),
                submit(job("a100", 2, 0, "A100"))),
            start(1, "n1", 0, 1)),
        refusedStart(
            "start of an unplaceable job",
            given(register("n1", 8), submit(job("big", 16, 0, ""))),
            start(1, "n1", 0, 1)),
        refusedStart("start before any node registered", given(submit(2)), start(1, "n1", 0, 1)),
        // task ends
        ok(
            "a failing task fails the job with its exit code",
            oneRunning(),
            ended("n1", 1, 1, 1, 0, 3),
            List.of(),
            s -> {
              var j = jobOf(s, 1);
              assertThat(j.state).isEqualTo(JobState.FAILED);
              assertThat(j.exitCode).isEqualTo(3);
              assertThat(j.message).isNotBlank();
              assertThat(j.endMs).isEqualTo(T0 + 5000);
              assertThat(s.store().freeMask(index(s, "n1"))).isEqualTo(0xFFL);
            }),
        ok(
            "a task stopped at its time limit fails the job even with exit 0",
            oneRunning(),
            new TaskEnded(T0 + 5000, "n1", 1, 1, 1, 0, 0, ExitReason.TIME_LIMIT, null),
            List.of(),
            s -> assertThat(jobOf(s, 1).state).isEqualTo(JobState.FAILED)),
        ok(
            "a single task exiting 0 succeeds the job",
            oneRunning(),
            ended("n1", 1, 1, 1, 0, 0),
            List.of(),
            s -> {
              assertThat(jobOf(s, 1).state).isEqualTo(JobState.SUCCEEDED);
              assertThat(jobOf(s, 1).exitCode).isZero();
              assertThat(s.activeJobs()).extracting(j -> j.id).containsExactly(2L);
            }),
        ok(
            "a gang runs on while one task has exited 0",
            gangRunning(),
            ended("n1", 1, 1, 1, 0, 0),
            List.of(),
            s -> assertThat(jobOf(s, 1).state).isEqualTo(JobState.RUNNING)),
        ok(
            "a gang succeeds when all its tasks exit 0",
            concat(gangRunning(), ended("n1", 1, 1, 1, 0, 0)),
            ended("n2", 2, 1, 1, 1, 0),
            List.of(),
            s -> {
              assertThat(jobOf(s, 1).state).isEqualTo(JobState.SUCCEEDED);
              assertThat(s.store().freeGpus()).isEqualTo(16);
            }),
        ok(
            "one failing task fails the whole gang, which keeps task 0's GPUs while it stops",
            gangRunning(),
            ended("n2", 2, 1, 1, 1, 137),
            List.of(),
            s -> {
              assertThat(jobOf(s, 1).state).isEqualTo(JobState.FAILED);
              assertThat(jobOf(s, 1).exitCode).isEqualTo(137);
              assertThat(jobOf(s, 1).releasing).isTrue();
              // n2's task ended: its GPUs are free; n1's task may still run: held.
              assertThat(s.store().freeGpus()).isEqualTo(12);
              assertThat(s.store().freeMask(index(s, "n1"))).isEqualTo(0xF0L);
              assertThat(s.store().freeMask(index(s, "n2"))).isEqualTo(0xFFL);
            }),
        ok(
            "a failed gang frees its GPUs when its last task reports its end",
            concat(gangRunning(), ended("n2", 2, 1, 1, 1, 137)),
            ended("n1", 1, 1, 1, 0, 143),
            List.of(),
            s -> {
              assertThat(jobOf(s, 1).state).isEqualTo(JobState.FAILED);
              assertThat(jobOf(s, 1).exitCode).isEqualTo(137);
              assertThat(jobOf(s, 1).releasing).isFalse();
              assertThat(s.store().freeGpus()).isEqualTo(16);
            }),
        ok(
            "a releasing job's GPUs are freed when its node's agent re-registers",
            concat(gangRunning(), ended("n2", 2, 1, 1, 1, 137)),
            register("n1", 8),
            List.of(3L),
            s -> {
              assertThat(jobOf(s, 1).releasing).isFalse();
              assertThat(s.store().freeGpus()).isEqualTo(16);
            }),
        ignored(
            "a task end with a stale epoch",
            concat(oneRunning(), register("n2", 8)),
            ended("n1", 0, 1, 1, 0, 0),
            409),
        ignored(
            "a task end from the node's previous epoch after it re-registered",
            concat(oneRunning(), register("n1", 8)),
            ended("n1", 1, 1, 1, 0, 0),
            409),
        ignored(
            "a task end of an older attempt",
            concat(oneRunning(), register("n1", 8), start(1, "n1", 0, 1)),
            ended("n1", 3, 1, 1, 0, 0),
            409),
        ignored(
            "a task end from a node the task does not run on",
            oneRunning(),
            ended("n2", 2, 1, 1, 0, 0),
            409),
        ignored(
            "a task end of a task index out of range",
            oneRunning(),
            ended("n1", 1, 1, 1, 1, 0),
            409),
        ignored("a task end of a pending job", oneRunning(), ended("n1", 1, 2, 1, 0, 0), 409),
        ignored("a task end of an unknown node", oneRunning(), ended("n9", 1, 1, 1, 0, 0), 409),
        ignored(
            "a second end of the same task",
            concat(gangRunning(), ended("n1", 1, 1, 1, 0, 0)),
            ended("n1", 1, 1, 1, 0, 5),
            409),
        ignored(
            "a task end after the job ended",
            concat(oneRunning(), ended("n1", 1, 1, 1, 0, 0)),
            ended("n1", 1, 1, 1, 0, 0),
            409),
        // cancel
        ok(
            "cancelling a pending job ends it and takes it out of the store",
            oneRunning(),
            cancel(2),
            List.of(),
            s -> {
              assertThat(jobOf(s, 2).state).isEqualTo(JobState.CANCELLED);
              assertThat(s.store().pending(JobId.of(2))).isEmpty();
            }),
        ok(
            "cancelling a running job keeps its GPUs until its task has stopped",
            oneRunning(),
            cancel(1),
            List.of(),
            s -> {
              assertThat(jobOf(s, 1).state).isEqualTo(JobState.CANCELLED);
              assertThat(jobOf(s, 1).releasing).isTrue();
              assertThat(s.store().freeMask(index(s, "n1"))).isEqualTo(0b1111_1100L);
            }),
        ok(
            "a cancelled job frees its GPUs when its task reports its end",
            concat(oneRunning(), cancel(1)),
            ended("n1", 1, 1, 1, 0, 143),
            List.of(),
            s -> {
              assertThat(jobOf(s, 1).state).isEqualTo(JobState.CANCELLED);
              assertThat(jobOf(s, 1).exitCode).isNull();
              assertThat(jobOf(s, 1).releasing).isFalse();
              assertThat(s.store().freeMask(index(s, "n1"))).isEqualTo(0xFFL);
            }),
        ok(
            "cancelling an unplaceable job",
            given(submit(4)),
            cancel(1),
            List.of(),
            s -> assertThat(s.isUnplaceable(1)).isFalse()),
        ignored(
            "cancelling a finished job",
            concat(oneRunning(), ended("n1", 1, 1, 1, 0, 0)),
            cancel(1),
            409),
        ignored("cancelling a cancelled job", given(submit(1), cancel(1)), cancel(1), 409),
        ignored("cancelling an unknown job", oneRunning(), cancel(42), 404),
        // drain and resume
        ok(
            "draining a node leaves its running job running",
            oneRunning(),
            drain("n1"),
            List.of(),
            s -> {
              assertThat(node(s, "n1").state).isEqualTo(NodeState.DRAINED);
              assertThat(jobOf(s, 1).state).isEqualTo(JobState.RUNNING);
              assertThat(s.store().isCordoned(index(s, "n1"))).isTrue();
            }),
        refusedStart(
            "a pending job does not start on a drained node",
            concat(oneRunning(), drain("n1")),
            start(2, "n1", 4, 5, 6, 7)),
        ok(
            "a pending job starts on a node that was resumed",
            concat(oneRunning(), drain("n1"), resume("n1")),
            start(2, "n1", 4, 5, 6, 7),
            List.of(2L),
            s -> assertThat(node(s, "n1").state).isEqualTo(NodeState.UP)),
        ok(
            "a drained node stays drained when it re-registers",
            concat(oneRunning(), drain("n1")),
            register("n1", 8),
            List.of(3L),
            s -> {
              assertThat(node(s, "n1").state).isEqualTo(NodeState.DRAINED);
              assertThat(s.store().isCordoned(index(s, "n1"))).isTrue();
            }),
        ignored("draining an unknown node", oneRunning(), drain("n9"), 404),
        ignored("resuming an unknown node", oneRunning(), resume("n9"), 404),
        // arrays
        ok(
            "an array makes one job per index in one entry, ids in task order",
            given(register("n1", 8)),
            submit(array("1,3,10-20:5")),
            List.of(1L, 2L, 3L, 4L, 5L),
            s -> {
              assertThat(jobOf(s, 1).array).isEqualTo(new ArrayElement(1, 1, 5, 1, 20, 0));
              assertThat(jobOf(s, 4).array.taskId()).isEqualTo(15);
              assertThat(s.store().pendingCount()).isEqualTo(5);
            }),
        ok(
            "an array's limit holds back the elements beyond it",
            given(register("n1", 8)),
            submit(array("0-4%2")),
            List.of(1L, 2L, 3L, 4L, 5L),
            s -> {
              assertThat(s.store().pending(JobId.of(2))).isPresent();
              assertThat(s.isHeldByArrayLimit(3)).isTrue();
              assertThat(s.isHeldByArrayLimit(5)).isTrue();
            }),
        ok(
            "an element ending lets the next held one join the queue",
            given(register("n1", 8), submit(array("0-3%1")), start(1, "n1", 0)),
            ended("n1", 1, 1, 1, 0, 0),
            List.of(),
            s -> {
              assertThat(s.store().pending(JobId.of(2))).isPresent();
              assertThat(s.isHeldByArrayLimit(3)).isTrue();
              assertThat(s.arrayAdmitted(1)).isEqualTo(1);
            }),
        ok(
            "a running element counts against the limit",
            given(register("n1", 8), submit(array("0-2%2")), start(1, "n1", 0)),
            start(2, "n1", 1),
            List.of(2L),
            s -> assertThat(s.isHeldByArrayLimit(3)).isTrue()),
        ok(
            "cancelling a queued element lets the next held one in",
            given(register("n1", 8), submit(array("0-2%1"))),
            cancel(1),
            List.of(),
            s -> {
              assertThat(s.store().pending(JobId.of(2))).isPresent();
              assertThat(s.isHeldByArrayLimit(3)).isTrue();
            }),
        ok(
            "cancelling a held element leaves the queue as it was",
            given(register("n1", 8), submit(array("0-2%1"))),
            cancel(3),
            List.of(),
            s -> {
              assertThat(s.isHeldByArrayLimit(2)).isTrue();
              assertThat(s.store().pendingCount()).isEqualTo(1);
            }),
        refusedStart(
            "a held element does not start",
            given(register("n1", 8), submit(array("0-2%1"))),
            start(2, "n1", 0)),
        // dependencies
        ok(
            "a job waiting on a dependency stays out of the store",
            given(register("n1", 8), submit(job(1))),
            submit(after("afterok:1")),
            List.of(2L),
            s -> {
              assertThat(s.isWaitingOnDependency(2)).isTrue();
              assertThat(s.store().pending(JobId.of(2))).isEmpty();
              assertThat(s.dependencyDetail(2))
                  .hasValueSatisfying(d -> assertThat(d).contains("afterok:1").contains("PENDING"));
            }),
        refusedStart(
            "a job waiting on a dependency does not start",
            given(register("n1", 8), submit(job(1)), submit(after("afterany:1"))),
            start(2, "n1", 0)),
        ok(
            "after holds once the job starts",
            given(register("n1", 8), submit(job(1)), submit(after("after:1"))),
            start(1, "n1", 0),
            List.of(1L),
            s -> assertThat(s.store().pending(JobId.of(2))).isPresent()),
        ok(
            "afterok holds once the job succeeds",
            given(register("n1", 8), submit(job(1)), submit(after("afterok:1")), start(1, "n1", 0)),
            ended("n1", 1, 1, 1, 0, 0),
            List.of(),
            s -> {
              assertThat(s.isWaitingOnDependency(2)).isFalse();
              assertThat(s.store().pending(JobId.of(2))).isPresent();
            }),
        ok(
            "afterok can never hold once the job fails: the dependent is cancelled",
            given(register("n1", 8), submit(job(1)), submit(after("afterok:1")), start(1, "n1", 0)),
            ended("n1", 1, 1, 1, 0, 3),
            List.of(),
            s -> {
              assertThat(jobOf(s, 2).state).isEqualTo(JobState.CANCELLED);
              assertThat(jobOf(s, 2).message)
                  .isEqualTo("dependency never satisfied: afterok:1: job 1 FAILED");
              assertThat(jobOf(s, 2).endMs).isEqualTo(T0 + 5000);
            }),
        ok(
            "afternotok holds once the job fails",
            given(
                register("n1", 8),
                submit(job(1)),
                submit(after("afternotok:1")),
                start(1, "n1", 0)),
            ended("n1", 1, 1, 1, 0, 3),
            List.of(),
            s -> assertThat(s.store().pending(JobId.of(2))).isPresent()),
        ok(
            "afternotok can never hold once the job succeeds",
            given(
                register("n1", 8),
                submit(job(1)),
                submit(after("afternotok:1")),
                start(1, "n1", 0)),
            ended("n1", 1, 1, 1, 0, 0),
            List.of(),
            s -> assertThat(jobOf(s, 2).state).isEqualTo(JobState.CANCELLED)),
        ok(
            "afterany holds once the job is cancelled",
            given(register("n1", 8), submit(job(1)), submit(after("afterany:1"))),
            cancel(1),
            List.of(),
            s -> assertThat(s.store().pending(JobId.of(2))).isPresent()),
        ok(
            "a chain of afterok is cancelled at once when its head is",
            given(
                register("n1", 8),
                submit(job(1)),
                submit(after("afterok:1")),
                submit(after("afterok:2"))),
            cancel(1),
            List.of(),
            s -> {
              assertThat(jobOf(s, 2).state).isEqualTo(JobState.CANCELLED);
              assertThat(jobOf(s, 3).state).isEqualTo(JobState.CANCELLED);
              assertThat(jobOf(s, 3).message).contains("afterok:2: job 2 CANCELLED");
            }),
        ok(
            "clauses joined by ',' must all hold",
            given(
                register("n1", 8), submit(job(1), job(1)), submit(after("afterany:1,afterany:2"))),
            cancel(1),
            List.of(),
            s -> assertThat(s.isWaitingOnDependency(3)).isTrue()),
        ok(
            "clauses joined by '?' need only one",
            given(register("n1", 8), submit(job(1), job(1)), submit(after("afterok:1?afterok:2"))),
            cancel(2),
            List.of(),
            s -> assertThat(s.isWaitingOnDependency(3)).isTrue()),
        ok(
            "... and hold as soon as one does",
            given(register("n1", 8), submit(job(1), job(1)), submit(after("afterok:1?afterany:2"))),
            cancel(2),
            List.of(),
            s -> assertThat(s.store().pending(JobId.of(3))).isPresent()),
        ok(
            "naming an array's id waits for every element",
            given(
                register("n1", 8),
                submit(array("0-1")),
                submit(after("afterok:1")),
                start(1, "n1", 0)),
            ended("n1", 1, 1, 1, 0, 0),
            List.of(),
            s -> {
              assertThat(s.isWaitingOnDependency(3)).isTrue();
              assertThat(s.dependencyDetail(3).orElseThrow()).contains("job 2 is PENDING");
            }),
        ok(
            "... and is cancelled when any element fails",
            given(
                register("n1", 8),
                submit(array("0-1")),
                submit(after("afterok:1")),
                start(2, "n1", 0)),
            ended("n1", 1, 2, 1, 0, 9),
            List.of(),
            s -> assertThat(jobOf(s, 3).state).isEqualTo(JobState.CANCELLED)),
        ok(
            "a dependency on a job that already failed is cancelled at submit",
            given(register("n1", 8), submit(job(1)), start(1, "n1", 0), ended("n1", 1, 1, 1, 0, 1)),
            submit(after("afterok:1")),
            List.of(2L),
            s -> {
              assertThat(jobOf(s, 2).state).isEqualTo(JobState.CANCELLED);
              assertThat(jobOf(s, 2).message).startsWith("dependency never satisfied");
            }),
        ok(
            "a dependency on an unknown job (the API refuses it) is cancelled",
            given(register("n1", 8)),
            submit(after("afterok:42")),
            List.of(1L),
            s -> assertThat(jobOf(s, 1).message).contains("job 42 did not exist before job 1")),
        ok(
            "cancelling a job that waits on a dependency",
            given(register("n1", 8), submit(job(1)), submit(after("afterok:1"))),
            cancel(2),
            List.of(),
            s -> {
              assertThat(s.isWaitingOnDependency(2)).isFalse();
              assertThat(jobOf(s, 1).state).isEqualTo(JobState.PENDING);
            }),
        ok(
            "an array waiting on a dependency joins the queue up to its limit",
            given(
                register("n1", 8),
                submit(job(1)),
                submit(
                    job(1)
                        .withArray(JobArray.parse("0-3%2"))
                        .withDependency(Dependency.parse("afterany:1")))),
            cancel(1),
            List.of(),
            s -> {
              assertThat(s.store().pending(JobId.of(2))).isPresent();
              assertThat(s.store().pending(JobId.of(3))).isPresent();
              assertThat(s.isHeldByArrayLimit(4)).isTrue();
              assertThat(s.isHeldByArrayLimit(5)).isTrue();
            }),
        ok(
            "a requeued job with a dependency goes straight back to the queue",
            given(
                register("n1", 8),
                register("n2", 8),
                submit(job(1)),
                submit(after("after:1")),
                start(1, "n1", 0),
                start(2, "n1", 1)),
            register("n1", 8),
            List.of(3L),
            s -> {
              assertThat(jobOf(s, 2).state).isEqualTo(JobState.PENDING);
              assertThat(s.store().pending(JobId.of(2))).isPresent();
            }),
        // tokens
        ok(
            "a token is stored by its hash",
            given(),
            token("ab12"),
            List.of(),
            s -> assertThat(s.token("ab12")).isPresent()));
  }

  /** n1 and n2 (8 GPUs, epochs 1 and 2); job 1, a gang of two 4-GPU tasks, runs on both. */
  static List<ControlCommand> gangRunning() {
    return given(
        register("n1", 8),
        register("n2", 8),
        submit(gang(8, 4)),
        startTasks(1, task(0, "n1", 0, 1, 2, 3), task(1, "n2", 0, 1, 2, 3)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("transitions")
  void transition(Scenario sc) {
    var state = new ControlState();
    for (ControlCommand c : sc.given()) {
      state.apply(c);
    }
    assertThat(StateInvariants.violations(state)).as("invariants before").isEmpty();
    JsonNode before = imageJson(state);
    var masksBefore = freeMasks(state);

    ControlResult result = state.apply(sc.when());

    assertThat(result.status()).as("status of %s: %s", sc.when(), result).isEqualTo(sc.status());
    assertThat(result.ids()).as("ids").isEqualTo(sc.ids());
    if (sc.unchanged()) {
      assertThat(imageJson(state)).as("records after %s", sc.when()).isEqualTo(before);
      assertThat(freeMasks(state)).as("store free masks").isEqualTo(masksBefore);
    }
    sc.then().accept(state);
    assertThat(StateInvariants.violations(state)).as("invariants after").isEmpty();
  }

  @Test
  void aSnapshotOfTheTableStatesRestoresTheSameRecordsAndStore() {
    transitions()
        .forEach(
            sc -> {
              var state = new ControlState();
              sc.given().forEach(state::apply);
              state.apply(sc.when());
              assertRoundTrip(state, sc.name());
            });
  }

  // --- snapshots and the property ----------------------------------------------------------

  /** 500 seeds; {@code -Dkairos.seed=S} replays one, {@code -Dkairos.propertySeeds=N} runs N. */
  static LongStream seeds() {
    Long one = Long.getLong("kairos.seed");
    return one != null
        ? LongStream.of(one)
        : LongStream.range(0, Long.getLong("kairos.propertySeeds", 500));
  }

  /**
   * Random command sequences (valid and invalid starts, stale and current task ends, cancels,
   * drains, re-registrations) keep every invariant after every step, and a snapshot taken at the
   * end restores the same records and the same store.
   */
  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void randomCommandsKeepTheInvariants(long seed) {
    var gen = new CommandGenerator(seed);
    var state = new ControlState();
    var log = new ArrayList<ControlCommand>();
    // The lease rule: a job running on a node found DOWN starts nowhere before the lost agent's
    // lease has surely run out (the NodeDown's safeAfterMs), whatever its backoff.
    var notBeforeMs = new java.util.HashMap<Long, Long>();
    for (int step = 0; step < 120; step++) {
      ControlCommand c = gen.next(state);
      log.add(c);
      long nextId = state.nextJobId();
      var onLostNode = new ArrayList<Long>();
      if (c instanceof NodeDown d) {
        for (JobRecord j : state.jobs()) {
          if (j.state == JobState.RUNNING
              && j.placement.stream().anyMatch(t -> t.node().equals(d.node()))) {
            onLostNode.add(j.id);
          }
        }
      }
      ControlResult r = state.apply(c);
      var violations = StateInvariants.violations(state);
      if (c instanceof NodeDown d && r.isOk()) {
        onLostNode.forEach(id -> notBeforeMs.merge(id, d.safeAfterMs(), Math::max));
      }
      if (c instanceof StartJobs starts) {
        for (long id : r.ids()) {
          long bound = notBeforeMs.getOrDefault(id, Long.MIN_VALUE);
          if (starts.atMs() < bound) {
            violations.add(
                "job "
                    + id
                    + " started at "
                    + starts.atMs()
                    + ", before its lost lease ended at "
                    + bound);
          }
        }
      }
      if (c instanceof SubmitJobs s) {
        int count = s.jobs().stream().mapToInt(JobRequest::jobCount).sum();
        var expected = LongStream.range(nextId, nextId + count).boxed().toList();
        if (!r.ids().equals(expected)) {
          violations.add("submit gave ids " + r.ids() + ", expected " + expected);
        }
      }
      if (c instanceof RegisterNode
          && !r.ids()
              .equals(List.of(node(state, ((RegisterNode) c).registration().node()).epoch))) {
        violations.add("register answered " + r.ids());
      }
      assertThat(violations)
          .as(
              "seed %d, step %d, after %s%nreplay: -Dtest=ControlStateTest -Dkairos.seed=%d"
                  + "%ncommands:%n%s",
              seed, step, c, seed, describe(log))
          .isEmpty();
    }
    assertRoundTrip(state, "seed " + seed);
    // A replay of the log from an empty state gives the same records (determinism).
    var replayed = new ControlState();
    log.forEach(replayed::apply);
    assertThat(imageJson(replayed)).as("replay of seed %d", seed).isEqualTo(imageJson(state));
  }

  @Test
  void configVersionsAreDecidedDeterministicallyKeptBoundedAndSnapshotted() {
    var state = new ControlState();
    String v1 = "queues:\n  - name: a\n    quotas: {\"gpu:H100\": {nominal: 1}}\n";
    var first = state.apply(new ControlCommand.ApplyConfig(1_000, 0, v1, "h1", "admin", false));
    assertThat(first.ids()).containsExactly(1L);
    // Made against version 0, but version 1 is current: refused, nothing changes.
    var stale = state.apply(new ControlCommand.ApplyConfig(2_000, 0, v1, "h1", "admin", false));
    assertThat(stale.status()).isEqualTo(409);
    var broken =
        state.apply(new ControlCommand.ApplyConfig(2_000, -1, "queues: 7", "h2", "admin", false));
    assertThat(broken.status()).isEqualTo(400);
    assertThat(state.config().orElseThrow().version()).isEqualTo(1);
    for (int i = 0; i < ConfigVersion.KEPT + 5; i++) {
      String doc = v1.replace("nominal: 1", "nominal: " + (i + 2));
      assertThat(
              state
                  .apply(new ControlCommand.ApplyConfig(3_000 + i, -1, doc, "h" + i, "bob", false))
                  .isOk())
          .isTrue();
    }
    assertThat(state.configHistory()).hasSize(ConfigVersion.KEPT);
    assertThat(state.config().orElseThrow().version()).isEqualTo(ConfigVersion.KEPT + 6L);
    assertThat(state.configHistory().getFirst().version()).isEqualTo(7);
    assertRoundTrip(state, "configs");
    var restored = ControlState.of(state.image());
    assertThat(restored.configHistory()).isEqualTo(state.configHistory());
  }

  /** Snapshot bytes → a new state: the same records, free masks, pending and running jobs. */
  static void assertRoundTrip(ControlState state, String what) {
    if (state.storeIsStale()) {
      state.apply(new ControlCommand.SettleNodes(T0)); // what the leader's scheduler proposes
    }
    byte[] bytes = imageBytes(state);
    ControlState restored;
    try {
      restored = ControlState.of(CommandCodec.readImage(new ByteArrayInputStream(bytes)));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    assertThat(imageJson(restored)).as("restored records (%s)", what).isEqualTo(imageJson(state));
    assertThat(freeMasks(restored))
        .as("restored free masks (%s)", what)
        .isEqualTo(freeMasks(state));
    assertThat(StateInvariants.violations(restored)).as("restored invariants (%s)", what).isEmpty();
    for (JobRecord j : state.activeJobs()) {
      assertThat(restored.isUnplaceable(j.id))
          .as("unplaceable %d (%s)", j.id, what)
          .isEqualTo(state.isUnplaceable(j.id));
    }
    if (state.store() != null) {
      assertThat(restored.store().pendingJobs())
          .as("pending (%s)", what)
          .containsExactlyElementsOf(state.store().pendingJobs());
      assertThat(restored.store().runningJobs())
          .as("running (%s)", what)
          .containsExactlyInAnyOrderElementsOf(state.store().runningJobs());
    }
    assertThat(restored.nextJobId()).isEqualTo(state.nextJobId());
  }

  // --- helpers -------------------------------------------------------------------------------

  static JobRecord jobOf(ControlState s, long id) {
    return s.job(id).orElseThrow(() -> new AssertionError("no job " + id));
  }

  static NodeRecord node(ControlState s, String name) {
    return s.node(name).orElseThrow(() -> new AssertionError("no node " + name));
  }

  static int index(ControlState s, String node) {
    return s.store().cluster().indexOf(node).orElseThrow();
  }

  /** Per node (by name): free GPU mask, free CPUs, free memory and whether cordoned. */
  static List<String> freeMasks(ControlState s) {
    var out = new ArrayList<String>();
    if (s.store() == null) {
      return out;
    }
    var store = s.store();
    for (int i = 0; i < store.cluster().nodeCount(); i++) {
      out.add(
          store.cluster().node(i).name()
              + ":"
              + Long.toBinaryString(store.freeMask(i))
              + ":"
              + store.freeCpus(i)
              + ":"
              + store.freeMemoryBytes(i)
              + ":"
              + store.isCordoned(i));
    }
    return out;
  }

  static byte[] imageBytes(ControlState s) {
    var out = new ByteArrayOutputStream();
    try {
      CommandCodec.writeImage(s.image(), out);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  /** The image as a JSON tree: object members compare regardless of order. */
  static JsonNode imageJson(ControlState s) {
    byte[] bytes = imageBytes(s);
    try {
      return JSON.readTree(bytes, 1, bytes.length - 1);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static List<ControlCommand> concat(List<ControlCommand> first, ControlCommand... more) {
    var all = new ArrayList<>(first);
    all.addAll(List.of(more));
    return all;
  }

  static String describe(List<ControlCommand> log) {
    var sb = new StringBuilder();
    for (int i = 0; i < log.size(); i++) {
      sb.append(String.format("%4d %s%n", i, log.get(i)));
    }
    return sb.toString();
  }

  /**
   * Seeded random commands over up to four nodes (1-8 GPUs, mostly H100): submits (single, gangs,
   * other models, jobs too big for any node), starts (mostly on free GPUs, some on used or absent
   * ones, unknown nodes, wrong ranks), task ends (current, stale epoch, old attempt, failing),
   * cancels (including unknown ids), drains, resumes and re-registrations.
   */
  static final class CommandGenerator {
    private static final String[] NODES = {"n1", "n2", "n3", "n4"};
    private final Random rnd;
    private long now = T0;

    CommandGenerator(long seed) {
      this.rnd = new Random(seed);
    }

    ControlCommand next(ControlState s) {
      now += rnd.nextInt(5_000);
      int pick = rnd.nextInt(100);
      if (s.nodes().isEmpty() || pick < 6) {
        return registerCommand();
      }
      if (pick < 30) {
        return submitCommand(s);
      }
      if (pick < 60) {
        return startCommand(s);
      }
      if (pick < 80) {
        return taskEndCommand(s);
      }
      if (pick < 88) {
        return new ControlCommand.CancelJob(now, 1 + rnd.nextInt((int) s.nextJobId() + 1), "u");
      }
      if (pick < 91) {
        return new ControlCommand.DrainNode(
            now, randomNode(), rnd.nextBoolean() ? null : "why", rnd.nextInt(3) == 0);
      }
      if (pick < 93) {
        String name = randomNode();
        long epoch = s.node(name).map(n -> n.epoch).orElse(0L) - (rnd.nextInt(5) == 0 ? 1 : 0);
        return new NodeDown(now, name, epoch, "lost", now + rnd.nextInt(15_000));
      }
      if (pick < 96) {
        return new ControlCommand.ResumeNode(now, randomNode());
      }
      if (pick < 98) {
        // Fresh and stale preemptions alike: any two ids.
        long victim = 1 + rnd.nextInt((int) s.nextJobId() + 1);
        long preemptor = 1 + rnd.nextInt((int) s.nextJobId() + 1);
        return new ControlCommand.PreemptJobs(
            now,
            rnd.nextInt(40),
            List.of(new ControlCommand.Preemption(victim, preemptor, "PRIORITY", "random")));
      }
      if (pick < 99) {
        // A GPU reported unhealthy (sometimes under a stale epoch, or a GPU the node lacks), or
        // returned to service by an admin.
        String name = randomNode();
        int gpu = rnd.nextInt(9);
        if (rnd.nextInt(3) == 0) {
          return new ControlCommand.ReturnGpu(now, name, gpu);
        }
        long epoch = s.node(name).map(n -> n.epoch).orElse(0L) - (rnd.nextInt(6) == 0 ? 1 : 0);
        return new ControlCommand.GpusUnhealthy(
            now, name, epoch, java.util.Map.of(gpu, "ECC errors on GPU " + gpu));
      }
      return new ControlCommand.AddToken(
          now, new TokenRecord(Long.toHexString(rnd.nextLong()), "u", TokenRecord.USER, now));
    }

    private String randomNode() {
      return rnd.nextInt(10) == 0 ? "n9" : NODES[rnd.nextInt(NODES.length)];
    }

    private ControlCommand registerCommand() {
      String name = NODES[rnd.nextInt(NODES.length)];
      int[] sizes = {1, 2, 4, 8, 8};
      int gpus = sizes[rnd.nextInt(sizes.length)];
      String model = rnd.nextInt(5) == 0 ? "A100" : "H100";
      return new RegisterNode(now, StateFixtures.node(name, gpus, model));
    }

    private ControlCommand submitCommand(ControlState s) {
      int n = 1 + rnd.nextInt(3);
      var jobs = new ArrayList<JobRequest>();
      for (int i = 0; i < n; i++) {
        int kind = rnd.nextInt(10);
        String model = rnd.nextInt(6) == 0 ? (rnd.nextBoolean() ? "A100" : "H100") : "";
        JobRequest r;
        if (kind < 2) {
          int per = 1 + rnd.nextInt(4);
          r = job("gang", per * (2 + rnd.nextInt(2)), per, model);
        } else if (kind == 2) {
          r = job("big", 9 + rnd.nextInt(8), 0, model);
        } else {
          r =
              rnd.nextInt(4) == 0
                  ? restartable(rnd.nextInt(5), 0, rnd.nextInt(3))
                  : job("job", rnd.nextInt(5), 0, model);
        }
        if (rnd.nextInt(6) == 0) {
          // An array of 2 to 6 elements, sometimes with a step, often with a limit.
          int from = rnd.nextInt(4);
          String spec =
              from
                  + "-"
                  + (from + 1 + rnd.nextInt(5))
                  + (rnd.nextInt(4) == 0 ? ":2" : "")
                  + (rnd.nextBoolean() ? "%" + (1 + rnd.nextInt(3)) : "");
          r = r.withArray(JobArray.parse(spec));
        }
        if (rnd.nextInt(4) == 0 && s.nextJobId() > 1) {
          r = r.withDependency(randomDependency(s));
        }
        jobs.add(r);
      }
      return new SubmitJobs(now, jobs);
    }

    /** One to three clauses on earlier jobs (rarely an unknown one), joined by ',' or '?'. */
    private Dependency randomDependency(ControlState s) {
      var kinds = Dependency.Kind.values();
      var clauses = new ArrayList<Dependency.Clause>();
      int n = 1 + rnd.nextInt(3);
      for (int i = 0; i < n; i++) {
        var ids = new ArrayList<Long>();
        int m = 1 + rnd.nextInt(2);
        for (int k = 0; k < m; k++) {
          // Mostly recent jobs, which are still pending or running.
          long last = s.nextJobId() - 1;
          long id = rnd.nextInt(30) == 0 ? last + 5 : Math.max(1, last - rnd.nextInt(6));
          ids.add(id);
        }
        clauses.add(new Dependency.Clause(kinds[rnd.nextInt(kinds.length)], ids));
      }
      return new Dependency(rnd.nextInt(4) == 0, clauses);
    }

    private ControlCommand startCommand(ControlState s) {
      var pending =
          s.activeJobs().stream()
              .filter(
                  j ->
                      j.state == JobState.PENDING
                          && ((!s.isUnplaceable(j.id)
                                  && !s.isWaitingOnDependency(j.id)
                                  && !s.isHeldByArrayLimit(j.id))
                              || rnd.nextInt(10) == 0))
              .toList();
      long jobId;
      int tasks;
      int perTask;
      if (pending.isEmpty() || rnd.nextInt(15) == 0) {
        jobId = 1 + rnd.nextInt((int) s.nextJobId() + 1);
        tasks = 1;
        perTask = rnd.nextInt(3);
      } else {
        JobRecord j = pending.get(rnd.nextInt(pending.size()));
        jobId = j.id;
        tasks = j.request.tasks();
        perTask = j.request.gpusPerTask();
      }
      var names = new ArrayList<>(List.of(NODES));
      java.util.Collections.shuffle(names, rnd);
      if (rnd.nextInt(4) != 0) {
        // Mostly the nodes with the most free GPUs first, so that many starts are valid.
        names.sort(java.util.Comparator.comparingInt((String n) -> -Long.bitCount(freeMask(s, n))));
      }
      var placement = new ArrayList<TaskPlacement>();
      boolean sloppy = rnd.nextInt(4) == 0;
      for (int t = 0; t < tasks; t++) {
        String name = sloppy && rnd.nextInt(6) == 0 ? "n9" : names.get(t % names.size());
        var gpus = new ArrayList<Integer>();
        long free = freeMask(s, name);
        for (int g = 0; g < perTask; g++) {
          if (!sloppy && free != 0) {
            int bit = Long.numberOfTrailingZeros(free);
            free &= free - 1;
            gpus.add(bit);
          } else {
            gpus.add(rnd.nextInt(10) - 1);
          }
        }
        int rank = sloppy && rnd.nextInt(8) == 0 ? rnd.nextInt(3) : t;
        placement.add(new TaskPlacement(rank, name, gpus));
      }
      return new StartJobs(now, List.of(new Start(jobId, placement)));
    }

    private static long freeMask(ControlState s, String node) {
      if (s.store() == null) {
        return 0;
      }
      return s.store().cluster().indexOf(node).map(i -> s.store().freeMask(i)).orElse(0L);
    }

    private ControlCommand taskEndCommand(ControlState s) {
      var running = s.activeJobs().stream().filter(j -> j.state == JobState.RUNNING).toList();
      if (running.isEmpty()) {
        return rnd.nextInt(4) == 0
            ? new TaskEnded(
                now, randomNode(), rnd.nextInt(5), 1 + rnd.nextInt(5), 1, 0, 0, null, null)
            : submitCommand(s);
      }
      JobRecord j = running.get(rnd.nextInt(running.size()));
      int t = rnd.nextInt(j.placement.size());
      String node = j.placement.get(t).node();
      long epoch = s.node(node).map(n -> n.epoch).orElse(0L);
      int attempt = j.attempt;
      int stale = rnd.nextInt(10);
      if (stale == 0) {
        epoch--;
      } else if (stale == 1) {
        attempt--;
      }
      int exit = rnd.nextInt(4) == 0 ? 1 + rnd.nextInt(255) : 0;
      int why = rnd.nextInt(24);
      ExitReason reason =
          why == 0
              ? ExitReason.TIME_LIMIT
              : why == 1 ? ExitReason.NODE_UNHEALTHY : why == 2 ? ExitReason.KILLED : null;
      return new TaskEnded(now, node, epoch, j.id, attempt, t, exit, reason, null);
    }
  }
}

package io.kairos.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.core.type.TypeReference;
import io.kairos.control.agent.AgentService;
import io.kairos.control.health.PhiAccrualDetector;
import io.kairos.protocol.JobState;
import io.kairos.protocol.JobView;
import io.kairos.protocol.NodeState;
import io.kairos.protocol.NodeView;
import io.kairos.protocol.SubmitResult;
import io.kairos.protocol.agent.ExitReason;
import io.kairos.protocol.agent.Heartbeat;
import io.kairos.protocol.agent.HeartbeatReply;
import io.kairos.protocol.agent.Registered;
import io.kairos.protocol.agent.TaskAssignment;
import io.kairos.protocol.agent.TaskRef;
import io.kairos.protocol.agent.TaskReport;
import io.kairos.protocol.agent.TaskStatus;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent protocol against a real controller (in-process, Ratis on a temp dir), with agents
 * played by hand-made register and heartbeat requests: the gang barrier, health drains, failure
 * detection and fencing, and task restarts.
 *
 * <p>Each test starts its own controller. All but the failure-detection test use a patient
 * detector, so that a fake agent that pauses between heartbeats is never declared down; that test
 * uses the real one (Akka's defaults) and real time, with bounded waits.
 */
class AgentProtocolTest {
  /** Tolerates an hour of silence: nodes stay ALIVE while a test takes its time. */
  static final PhiAccrualDetector.Settings PATIENT =
      new PhiAccrualDetector.Settings(8.0, 1000, 100, 3_600_000, 1_000);

  static final String ECC = "GPU 0 (GPU-x): uncorrectable ECC errors rose 0 -> 2";

  @TempDir Path dir;
  Controller controller;
  TestApi api;
  TestApi join;

  @AfterEach
  void stop() throws IOException {
    if (controller != null) {
      controller.close();
    }
  }

  void start(PhiAccrualDetector.Settings detection) throws Exception {
    controller =
        Controller.start(
            ControllerConfig.single(dir, "127.0.0.1", 0)
                .withRunAs(TestApi.SINGLE_USER)
                .withDetection(detection)
                .withLease(
                    detection.equals(PATIENT)
                        ? io.kairos.control.agent.LeaseSettings.PATIENT
                        : io.kairos.control.agent.LeaseSettings.DEFAULT));
    Leaders.awaitLeader(controller, Duration.ofSeconds(30));
    api = new TestApi(controller.url(), controller.adminToken());
    join = api.as(controller.joinToken());
  }

  // ---- a. the gang barrier ----

  @Test
  void aGangStartsOnlyOnceEveryTaskIsReady() throws Exception {
    start(PATIENT);
    var a = new FakeAgent("a", 2).register();
    var b = new FakeAgent("b", 2).register();
    long id = submit("{\"command\":[\"torchrun\",\"train.py\"],\"gpus\":4,\"gpusPerNode\":2}");
    awaitState(id, JobState.RUNNING);

    TaskAssignment ta = a.launched(id);
    TaskAssignment tb = b.launched(id);
    for (TaskAssignment t : List.of(ta, tb)) {
      assertThat(t.barrier()).as("a multi-node gang waits at the barrier").isTrue();
      assertThat(t.tasks()).isEqualTo(2);
      assertThat(t.gpus()).hasSize(2);
      assertThat(t.attempt()).isEqualTo(1);
    }
    assertThat(List.of(ta.task(), tb.task())).containsExactlyInAnyOrder(0, 1);
    assertThat(ta.nodes()).isEqualTo(tb.nodes()).containsExactlyInAnyOrder("a", "b");

    HeartbeatReply aReady = a.beat(report(ta, TaskStatus.READY));
    assertThat(aReady.go()).as("b is not ready yet").isEmpty();
    assertThat(aReady.launch()).as("a holds its task").isEmpty();
    assertThat(aReady.kill()).isEmpty();
    HeartbeatReply stillWaiting = a.beat(report(ta, TaskStatus.READY));
    assertThat(stillWaiting.go()).isEmpty();

    HeartbeatReply bReady = b.beat(report(tb, TaskStatus.READY));
    assertThat(bReady.go()).containsExactly(ref(tb));
    assertThat(bReady.kill()).isEmpty();

    HeartbeatReply aAgain = a.beat(report(ta, TaskStatus.READY));
    assertThat(aAgain.go()).containsExactly(ref(ta));

    // Once running, nothing more is said about the task.
    HeartbeatReply aRunning = a.beat(report(ta, TaskStatus.RUNNING));
    assertThat(aRunning.go()).isEmpty();
    assertThat(aRunning.kill()).isEmpty();
    assertThat(aRunning.launch()).isEmpty();
    assertThat(job(id).state()).isEqualTo(JobState.RUNNING);
  }

  @Test
  void aReadyReportOfAnotherAttemptIsKilledAndDoesNotCountAtTheBarrier() throws Exception {
    start(PATIENT);
    var a = new FakeAgent("a", 2).register();
    var b = new FakeAgent("b", 2).register();
    long id = submit("{\"command\":[\"torchrun\",\"train.py\"],\"gpus\":4,\"gpusPerNode\":2}");
    awaitState(id, JobState.RUNNING);
    TaskAssignment ta = a.launched(id);
    TaskAssignment tb = b.launched(id);

    var stale =
        new TaskReport(
            id, ta.attempt() + 1, ta.task(), TaskStatus.READY, null, null, null, null, null);
    HeartbeatReply staleReply = a.beat(stale);
    assertThat(staleReply.go()).isEmpty();
    assertThat(staleReply.kill())
        .as("a task the state does not expect is killed")
        .extracting(k -> k.jobId())
        .containsExactly(id);

    assertThat(b.beat(report(tb, TaskStatus.READY)).go())
        .as("a's report of another attempt did not count")
        .isEmpty();
  }

  /**
   * The barrier counts a READY report only for a task placed on the reporting node: a report of
   * another node's rank, or of a rank outside the gang, neither opens the barrier nor fails the
   * heartbeat.
   */
  @Test
  void aReadyReportOfATaskNotPlacedOnTheNodeDoesNotCountAtTheBarrier() throws Exception {
    start(PATIENT);
    var a = new FakeAgent("a", 2).register();
    var b = new FakeAgent("b", 2).register();
    long id = submit("{\"command\":[\"torchrun\",\"train.py\"],\"gpus\":4,\"gpusPerNode\":2}");
    awaitState(id, JobState.RUNNING);
    TaskAssignment ta = a.launched(id);
    TaskAssignment tb = b.launched(id);
    var outside =
        new TaskReport(id, ta.attempt(), -1, TaskStatus.READY, null, null, null, null, null);
    var pastTheGang =
        new TaskReport(id, ta.attempt(), 2, TaskStatus.READY, null, null, null, null, null);

    assertThat(a.beat(report(ta, TaskStatus.READY), outside).go()).isEmpty();
    assertThat(a.beat(report(ta, TaskStatus.READY), pastTheGang).go()).isEmpty();
    assertThat(a.beat(report(ta, TaskStatus.READY), report(tb, TaskStatus.READY)).go())
        .as("a cannot speak for b's task")
        .isEmpty();

    assertThat(b.beat(report(tb, TaskStatus.READY)).go()).containsExactly(ref(tb));
  }

  // ---- b. health ----

  @Test
  void aNodeReportingEccErrorsIsDrainedAndItsJobMovesToAnotherNode() throws Exception {
    start(PATIENT);
    var agents = List.of(new FakeAgent("a", 2).register(), new FakeAgent("b", 2).register());
    long id =
        submit(
            "{\"command\":[\"python3\",\"train.py\"],\"gpus\":2,"
                + "\"checkpointDir\":\"/ckpt/run1\"}");
    JobView running = awaitState(id, JobState.RUNNING);
    String sick = running.placement().get(0).node();
    FakeAgent bad = agents.get(0).name.equals(sick) ? agents.get(0) : agents.get(1);
    FakeAgent good = bad == agents.get(0) ? agents.get(1) : agents.get(0);
    TaskAssignment t = bad.launched(id);
    assertThat(t.barrier()).as("a one-node job needs no barrier").isFalse();
    assertThat(t.checkpointDir()).isEqualTo("/ckpt/run1");
    bad.beat(report(t, TaskStatus.RUNNING));

    HeartbeatReply sickReply = bad.beat(List.of(ECC), report(t, TaskStatus.RUNNING));

    assertThat(sickReply.fenced()).isFalse();
    assertThat(sickReply.kill())
        .as("the job's task on the drained node is stopped")
        .extracting(k -> k.jobId())
        .containsExactly(id);
    NodeView drained = node(bad.name);
    assertThat(drained.state()).isEqualTo(NodeState.DRAINED);
    assertThat(drained.reason()).contains("ECC");
    assertThat(node(good.name).state()).isEqualTo(NodeState.UP);
    JobView stopping = job(id);
    assertThat(stopping.state())
        .as("a requeue waits for the task to stop")
        .isEqualTo(JobState.RUNNING);
    assertThat(stopping.message()).contains("requeued");

    HeartbeatReply stopped = bad.beat(List.of(ECC), exited(t, 143, ExitReason.KILLED));

    assertThat(stopped.forget()).containsExactly(ref(t));
    JobView requeued = job(id);
    assertThat(requeued.state()).isEqualTo(JobState.PENDING);
    assertThat(requeued.requeues()).isEqualTo(1);
    assertThat(requeued.excludeNodes()).containsExactly(bad.name);
    assertThat(requeued.checkpointDir()).isEqualTo("/ckpt/run1");
    assertThat(requeued.exitCode()).isNull();

    JobView moved = awaitState(id, JobState.RUNNING);
    assertThat(moved.placement()).extracting(p -> p.node()).containsExactly(good.name);
    assertThat(moved.attempt()).isEqualTo(2);
    TaskAssignment again = good.launched(id);
    assertThat(again.attempt()).isEqualTo(2);
    assertThat(again.restarts()).isEqualTo(1);
    assertThat(again.checkpointDir()).as("kept across the requeue").isEqualTo("/ckpt/run1");
    assertThat(bad.beat(List.of(ECC)).launch())
        .as("nothing new lands on the drained node")
        .isEmpty();
  }

  @Test
  void anUnhealthyGpuIsTakenOutAloneItsJobMovesAndTheOtherJobKeepsRunning() throws Exception {
    start(PATIENT);
    var a = new FakeAgent("a", 4).register();
    long x = submit("{\"command\":[\"sleep\",\"600\"],\"gpus\":2}");
    long y = submit("{\"command\":[\"sleep\",\"600\"],\"gpus\":2}");
    awaitState(x, JobState.RUNNING);
    awaitState(y, JobState.RUNNING);
    var launched = a.beat().launch();
    assertThat(launched).hasSize(2);
    TaskAssignment tx = launched.stream().filter(l -> l.jobId() == x).findFirst().orElseThrow();
    TaskAssignment ty = launched.stream().filter(l -> l.jobId() == y).findFirst().orElseThrow();
    int bad = job(x).placement().get(0).gpus().get(1);
    String reason = "GPU " + bad + " (GPU-x): uncorrectable ECC errors rose 0 -> 2";

    HeartbeatReply sick =
        a.beatGpus(
            java.util.Map.of(bad, reason),
            report(tx, TaskStatus.RUNNING),
            report(ty, TaskStatus.RUNNING));

    assertThat(sick.kill())
        .as("only the job placed with the bad GPU is stopped")
        .extracting(k -> k.jobId())
        .containsExactly(x);
    NodeView node = node("a");
    assertThat(node.state()).as("the node keeps serving its other GPUs").isEqualTo(NodeState.UP);
    assertThat(node.reason()).isNull();
    assertThat(node.gpusOutOfService()).containsOnlyKeys(bad);
    assertThat(node.gpusOutOfService().get(bad)).contains("ECC");
    assertThat(job(y).state()).isEqualTo(JobState.RUNNING);
    assertThat(job(y).attempt()).isEqualTo(1);

    a.beatGpus(
        java.util.Map.of(bad, reason),
        exited(tx, 143, ExitReason.KILLED),
        report(ty, TaskStatus.RUNNING));
    JobView requeued = job(x);
    assertThat(requeued.state()).isEqualTo(JobState.PENDING);
    assertThat(requeued.requeues()).isEqualTo(1);
    assertThat(requeued.message()).contains("GPU " + bad).contains("unhealthy");
    assertThat(requeued.excludeNodes()).as("the node is not avoided, its GPU is").isNullOrEmpty();
    // One good GPU is free on a (4 - y's 2 - the bad one): x (2 GPUs) waits.
    Thread.sleep(2_500); // past x's backoff, so that it would start if it could
    assertThat(job(x).state()).isEqualTo(JobState.PENDING);
    assertThat(a.beat(report(ty, TaskStatus.RUNNING)).launch()).isEmpty();

    // Users may not return a GPU; a bad index is a 400 naming the field; an in-service one a 409.
    String user = createToken("carol");
    assertThat(api.as(user).post("/api/v1/nodes/a/gpus/" + bad + "/resume", "").status())
        .isEqualTo(403);
    var badIndex = api.post("/api/v1/nodes/a/gpus/9/resume", "");
    assertThat(badIndex.status()).isEqualTo(400);
    assertThat(badIndex.body()).contains("gpu");
    int good = bad == 0 ? 1 : 0;
    assertThat(api.post("/api/v1/nodes/a/gpus/" + good + "/resume", "").status()).isEqualTo(409);
    assertThat(node("a").gpusOutOfService()).containsOnlyKeys(bad);

    var back = api.post("/api/v1/nodes/a/gpus/" + bad + "/resume", "");
    assertThat(back.status()).as(back.body()).isEqualTo(200);
    assertThat(back.as(NodeView.class).gpusOutOfService()).isNull();
    JobView again = awaitState(x, JobState.RUNNING);
    assertThat(again.placement().get(0).node()).isEqualTo("a");
    assertThat(again.attempt()).isEqualTo(2);
  }

  // ---- c. failure detection (real time) ----

  @Test
  void aSilentAgentIsDeclaredDownFencedAndItsJobRequeuedAfterItsLease() throws Exception {
    start(PhiAccrualDetector.Settings.AKKA_DEFAULTS);
    var a = new FakeAgent("a", 2).register();
    long oldEpoch = a.epoch;
    long id = submit("{\"command\":[\"python3\",\"train.py\"],\"gpus\":2}");
    awaitState(id, JobState.RUNNING);
    TaskAssignment t = a.launched(id);

    // About 3 s of heartbeats at 1/s: the detector learns the rhythm. (The sleep is the fake
    // agent's heartbeat interval: this test is about real time.)
    NodeView alive = null;
    for (int i = 0; i < 4; i++) {
      Thread.sleep(AgentService.HEARTBEAT_INTERVAL_MS);
      assertThat(a.beat(report(t, TaskStatus.RUNNING)).fenced()).isFalse();
      alive = node("a");
      assertThat(alive.liveness()).isEqualTo("ALIVE");
      assertThat(alive.phi()).as("phi just after a heartbeat").isNotNull().isLessThan(1.0);
    }
    Instant lastHeartbeat = Instant.parse(alive.lastHeartbeat());

    // Silence. Akka's defaults declare a 1/s agent down about 4.5 s after its last heartbeat;
    // the bounds leave room for a loaded machine.
    var seen = new ArrayList<String>();
    NodeView down =
        await()
            .atMost(Duration.ofSeconds(12))
            .pollInterval(Duration.ofMillis(100))
            .until(
                () -> {
                  NodeView n = node("a");
                  if (seen.isEmpty() || !seen.getLast().equals(n.liveness())) {
                    seen.add(n.liveness());
                  }
                  return n;
                },
                n -> n.state() == NodeState.DOWN);
    Instant downAt = Instant.now();

    assertThat(Duration.between(lastHeartbeat, downAt)).isLessThan(Duration.ofSeconds(10));
    assertThat(down.reason()).contains("no heartbeat");
    assertThat(down.liveness()).isEqualTo("DOWN");
    assertThat(down.epoch()).as("a new epoch fences the lost agent").isNotEqualTo(oldEpoch);
    assertThat(seen)
        .as("liveness only moves forward")
        .isSubsetOf("ALIVE", "SUSPECT", "DOWN")
        .endsWith("DOWN");
    assertThat(seen.indexOf("ALIVE")).isLessThanOrEqualTo(0);

    JobView requeued = job(id);
    assertThat(requeued.state()).isEqualTo(JobState.PENDING);
    assertThat(requeued.requeues()).isEqualTo(1);
    assertThat(requeued.message()).contains("down");
    assertThat(requeued.eligibleTime()).as("held until the lost lease has run out").isNotNull();
    Instant eligible = Instant.parse(requeued.eligibleTime());
    assertThat(eligible)
        .isAfterOrEqualTo(
            lastHeartbeat.plusMillis(io.kairos.control.agent.LeaseSettings.DEFAULT.leaseMs()));

    HeartbeatReply late = a.beat(report(t, TaskStatus.RUNNING));
    assertThat(late.fenced()).as("a heartbeat under the old epoch").isTrue();
    assertThat(late.launch()).isEmpty();

    a.register();
    assertThat(a.epoch).isNotEqualTo(oldEpoch);
    NodeView back = node("a");
    assertThat(back.state()).isEqualTo(NodeState.UP);
    assertThat(back.reason()).isNull();
    assertThat(back.liveness()).isEqualTo("ALIVE");

    // The node is back, but the job waits for the old lease; the agent keeps heartbeating.
    JobView restarted =
        await()
            .atMost(Duration.ofSeconds(20))
            .pollInterval(Duration.ofMillis(500))
            .until(
                () -> {
                  assertThat(a.beat().fenced()).isFalse();
                  return job(id);
                },
                j -> j.state() == JobState.RUNNING);
    assertThat(Instant.parse(restarted.startTime())).isAfterOrEqualTo(eligible);
    assertThat(restarted.attempt()).isEqualTo(2);
    assertThat(node("a").state()).isEqualTo(NodeState.UP);
  }

  // ---- d. restarts ----

  @Test
  void aFailedTaskRestartsTheJobUpToMaxRestartsThenTheJobFails() throws Exception {
    start(PATIENT);
    var a = new FakeAgent("a", 2).register();
    long id =
        submit(
            "{\"command\":[\"python3\",\"train.py\"],\"gpus\":1,\"maxRestarts\":1,"
                + "\"killSignal\":\"sigusr1\",\"gracePeriod\":\"1:00\",\"warnSignal\":\"USR2@120\"}");
    awaitState(id, JobState.RUNNING);
    TaskAssignment first = a.launched(id);
    assertThat(first.restarts()).isZero();
    assertThat(first.killSignal()).isEqualTo("USR1");
    assertThat(first.graceSec()).isEqualTo(60);
    assertThat(first.warnSignal()).isEqualTo("USR2");
    assertThat(first.warnBeforeSec()).isEqualTo(120);

    HeartbeatReply recorded = a.beat(exited(first, 3, null));

    assertThat(recorded.forget()).containsExactly(ref(first));
    JobView requeued = job(id);
    assertThat(requeued.state()).isEqualTo(JobState.PENDING);
    assertThat(requeued.requeues()).isEqualTo(1);
    assertThat(requeued.message()).contains("exited with code 3").contains("restart 1 of 1");
    assertThat(requeued.exitCode()).isNull();
    assertThat(requeued.excludeNodes())
        .as("the only node is not avoided: that would strand the job")
        .isNull();

    awaitState(id, JobState.RUNNING);
    TaskAssignment second = a.launched(id);
    assertThat(second.attempt()).isEqualTo(2);
    assertThat(second.restarts()).isEqualTo(1);

    a.beat(exited(second, 3, null));

    JobView failed = job(id);
    assertThat(failed.state()).isEqualTo(JobState.FAILED);
    assertThat(failed.exitCode()).isEqualTo(3);
    assertThat(failed.requeues()).isEqualTo(1);
    assertThat(failed.message()).contains("exited with code 3").doesNotContain("restart");
    assertThat(node("a").state())
        .as("one job failing twice does not make a node suspect")
        .isEqualTo(NodeState.UP);
  }

  @Test
  void aTaskKilledOnRequestDoesNotUseARestart() throws Exception {
    start(PATIENT);
    var a = new FakeAgent("a", 2).register();
    long id = submit("{\"command\":[\"python3\",\"train.py\"],\"gpus\":1,\"maxRestarts\":1}");
    awaitState(id, JobState.RUNNING);
    TaskAssignment t = a.launched(id);

    a.beat(exited(t, 137, ExitReason.KILLED));

    JobView failed = job(id);
    assertThat(failed.state()).isEqualTo(JobState.FAILED);
    assertThat(failed.requeues()).isZero();
    assertThat(failed.message()).contains("killed");
  }

  // ---- e. elastic jobs ----

  /**
   * An elastic job (1 to 3 nodes) starts on all three idle nodes, its tasks told their sizes and
   * the rendezvous; a fixed two-node job arrives: the elastic job shrinks to one node instead of
   * being preempted, the leaving tasks are stopped, their ends are no failure, and the fixed job
   * starts on the nodes they free.
   */
  @Test
  void anElasticJobStartsLargeThenShrinksForAWaitingJob() throws Exception {
    start(PATIENT);
    var agents =
        List.of(
            new FakeAgent("a", 2).register(),
            new FakeAgent("b", 2).register(),
            new FakeAgent("c", 2).register());
    long id =
        submit(
            "{\"command\":[\"torchrun\",\"train.py\"],\"gpus\":2,\"maxGpus\":6,"
                + "\"gpusPerNode\":2}");
    JobView running = awaitState(id, JobState.RUNNING);
    assertThat(running.placement()).as("started at its maximum").hasSize(3);
    assertThat(running.elastic().nodes()).isEqualTo(3);
    var tasks = new java.util.HashMap<String, TaskAssignment>();
    for (FakeAgent agent : agents) {
      TaskAssignment t = agent.launched(id);
      assertThat(t.env())
          .containsEntry("KAIROS_NNODES", "3")
          .containsEntry("KAIROS_NNODES_MIN", "1")
          .containsEntry("KAIROS_NNODES_MAX", "3")
          .containsKey("KAIROS_RDZV_ENDPOINT");
      tasks.put(agent.name, t);
      agent.beat(report(t, TaskStatus.RUNNING));
    }

    long fixed = submit("{\"command\":[\"torchrun\",\"train.py\"],\"gpus\":4,\"gpusPerNode\":2}");
    var killed = new java.util.TreeSet<String>();
    await()
        .atMost(Duration.ofSeconds(15))
        .pollInterval(Duration.ofMillis(50))
        .until(
            () -> {
              for (FakeAgent agent : agents) {
                var reply = agent.beat(report(tasks.get(agent.name), TaskStatus.RUNNING));
                if (reply.kill().stream().anyMatch(k -> k.jobId() == id)) {
                  killed.add(agent.name);
                }
              }
              return killed.size() == 2;
            });
    assertThat(job(fixed).state()).as("waits for the nodes").isEqualTo(JobState.PENDING);
    for (String name : killed) {
      FakeAgent agent = agents.stream().filter(g -> g.name.equals(name)).findFirst().orElseThrow();
      agent.beat(exited(tasks.get(name), 143, ExitReason.KILLED));
    }
    JobView shrunk = job(id);
    assertThat(shrunk.state()).as("leaving is no failure").isEqualTo(JobState.RUNNING);
    assertThat(shrunk.elastic().nodes()).isEqualTo(1);
    assertThat(shrunk.elastic().resizes()).hasSize(2);
    JobView started = awaitState(fixed, JobState.RUNNING);
    assertThat(started.placement())
        .extracting(p -> p.node())
        .containsExactlyInAnyOrderElementsOf(killed);
  }

  /**
   * The barrier's ready sets are leader memory: after a leader change (here the controller restarts
   * on its log: a leader with an empty memory) a rank added by a grow must not wait for the ranks
   * already running, which never report READY again, and a rank of a started gang that had not
   * heard "go" before the change must not wait either once another rank reports RUNNING.
   */
  @Test
  void afterALeaderChangeAGrownRankStartsAtOnce() throws Exception {
    // Fixed ports: the restarted controller is the same Raft peer.
    int port = ControllerProcess.freePortPair();
    var config =
        ControllerConfig.single(dir, "127.0.0.1", port)
            .withRunAs(TestApi.SINGLE_USER)
            .withDetection(PATIENT)
            .withLease(io.kairos.control.agent.LeaseSettings.PATIENT);
    controller = Controller.start(config);
    Leaders.awaitLeader(controller, Duration.ofSeconds(30));
    api = new TestApi(controller.url(), controller.adminToken());
    join = api.as(controller.joinToken());
    var c = new FakeAgent("c", 2).register();
    long filler = submit("{\"command\":[\"sleep\",\"600\"],\"gpus\":2}");
    awaitState(filler, JobState.RUNNING);
    TaskAssignment f = c.launched(filler);
    c.beat(report(f, TaskStatus.RUNNING));
    var a = new FakeAgent("a", 2).register();
    var b = new FakeAgent("b", 2).register();
    long id =
        submit(
            "{\"command\":[\"torchrun\",\"train.py\"],\"gpus\":4,\"maxGpus\":6,"
                + "\"gpusPerNode\":2}");
    JobView running = awaitState(id, JobState.RUNNING);
    assertThat(running.placement()).as("c is busy: two nodes").hasSize(2);
    TaskAssignment ta = a.launched(id);
    TaskAssignment tb = b.launched(id);
    assertThat(a.beat(report(ta, TaskStatus.READY)).go()).isEmpty();
    assertThat(b.beat(report(tb, TaskStatus.READY)).go()).containsExactly(ref(tb));
    // a has not heard "go" when the leader changes.

    controller.close();
    controller = Controller.start(config);
    Leaders.awaitLeader(controller, Duration.ofSeconds(60));
    api = new TestApi(controller.url(), controller.adminToken());
    join = api.as(controller.joinToken());

    // b's rank runs: a's rank, still READY, goes.
    b.beat(report(tb, TaskStatus.RUNNING));
    assertThat(a.beat(report(ta, TaskStatus.READY)).go()).containsExactly(ref(ta));
    a.beat(report(ta, TaskStatus.RUNNING));

    // Another leader change; the filler ends: the job grows onto c, whose new rank goes at once,
    // before this leader has heard from a or b.
    controller.close();
    controller = Controller.start(config);
    Leaders.awaitLeader(controller, Duration.ofSeconds(60));
    api = new TestApi(controller.url(), controller.adminToken());
    join = api.as(controller.joinToken());
    c.beat(exited(f, 0, null));
    TaskAssignment tc =
        await()
            .atMost(Duration.ofSeconds(30))
            .pollInterval(Duration.ofMillis(100))
            .until(
                () -> {
                  var reply = c.beat();
                  return reply.launch().stream()
                      .filter(t -> t.jobId() == id)
                      .findFirst()
                      .orElse(null);
                },
                t -> t != null);
    assertThat(tc.task()).isEqualTo(2);
    assertThat(tc.barrier()).isTrue();
    assertThat(c.beat(report(tc, TaskStatus.READY)).go())
        .as("the grown rank waits for no one")
        .containsExactly(ref(tc));
    assertThat(job(id).elastic().nodes()).isEqualTo(3);
  }

  @Test
  void aJobStoppedBeforeItsLaunchReachedTheAgentFreesItsGpusThere() throws Exception {
    start(PATIENT);
    var a = new FakeAgent("a", 2).register();
    long id = submit("{\"command\":[\"sleep\",\"60\"],\"gpus\":2}");
    awaitState(id, JobState.RUNNING);
    // Cancelled before any heartbeat brought the agent its launch.
    var cancel = api.post("/api/v1/jobs/" + id + "/cancel", "{}");
    assertThat(cancel.status()).as(cancel.body()).isEqualTo(200);
    long next = submit("{\"command\":[\"sleep\",\"60\"],\"gpus\":2}");

    // The agent holds nothing: the first job's task never started here, its GPUs are free.
    a.beat();
    awaitState(next, JobState.RUNNING);
    assertThat(a.launched(next).jobId()).isEqualTo(next);
    assertThat(job(id).state()).isEqualTo(JobState.CANCELLED);
  }

  // ---- helpers ----

  /** An agent played by hand: it registers and heartbeats with {@code waitMs} 0. */
  final class FakeAgent {
    final String name;
    final int gpus;
    long epoch;

    FakeAgent(String name, int gpus) {
      this.name = name;
      this.gpus = gpus;
    }

    FakeAgent register() {
      var reply = join.post("/api/v1/agents/register", ControllerApiTest.node(name, gpus));
      assertThat(reply.status()).as(reply.body()).isEqualTo(200);
      epoch = reply.as(Registered.class).epoch();
      return this;
    }

    HeartbeatReply beat(TaskReport... tasks) {
      return beat(null, tasks);
    }

    HeartbeatReply beat(List<String> problems, TaskReport... tasks) {
      var reply =
          join.asNode(name)
              .post(
                  "/api/v1/agents/heartbeat",
                  new Heartbeat(name, epoch, List.of(tasks), 0, problems));
      assertThat(reply.status()).as(reply.body()).isEqualTo(200);
      return reply.as(HeartbeatReply.class);
    }

    /** A heartbeat reporting problems of single GPUs. */
    HeartbeatReply beatGpus(java.util.Map<Integer, String> gpuProblems, TaskReport... tasks) {
      var reply =
          join.asNode(name)
              .post(
                  "/api/v1/agents/heartbeat",
                  new Heartbeat(name, epoch, List.of(tasks), 0, null, gpuProblems));
      assertThat(reply.status()).as(reply.body()).isEqualTo(200);
      return reply.as(HeartbeatReply.class);
    }

    /** The launch of {@code jobId}'s current task here, from a heartbeat that holds nothing. */
    TaskAssignment launched(long jobId) {
      HeartbeatReply reply = beat();
      assertThat(reply.fenced()).isFalse();
      assertThat(reply.launch())
          .as("launches for %s", name)
          .singleElement()
          .satisfies(l -> assertThat(l.jobId()).isEqualTo(jobId));
      assertThat(reply.go()).isEmpty();
      return reply.launch().getFirst();
    }
  }

  static TaskReport report(TaskAssignment t, TaskStatus status) {
    return new TaskReport(
        t.jobId(),
        t.attempt(),
        t.task(),
        status,
        null,
        null,
        null,
        status == TaskStatus.RUNNING ? System.currentTimeMillis() : null,
        null);
  }

  static TaskReport exited(TaskAssignment t, int exitCode, ExitReason reason) {
    long now = System.currentTimeMillis();
    return new TaskReport(
        t.jobId(),
        t.attempt(),
        t.task(),
        TaskStatus.EXITED,
        exitCode,
        reason,
        null,
        now - 1_000,
        now);
  }

  static TaskRef ref(TaskAssignment t) {
    return new TaskRef(t.jobId(), t.attempt(), t.task());
  }

  long submit(String body) {
    var reply = api.post("/api/v1/jobs", body);
    assertThat(reply.status()).as(reply.body()).isEqualTo(201);
    return reply.as(SubmitResult.class).id();
  }

  JobView job(long id) {
    var reply = api.get("/api/v1/jobs/" + id);
    assertThat(reply.status()).as(reply.body()).isEqualTo(200);
    return reply.as(JobView.class);
  }

  JobView awaitState(long id, JobState state) {
    return await()
        .atMost(Duration.ofSeconds(15))
        .pollInterval(Duration.ofMillis(50))
        .until(() -> job(id), j -> j.state() == state);
  }

  /** A plain user's token. */
  String createToken(String user) {
    var r = api.post("/api/v1/tokens", java.util.Map.of("user", user));
    assertThat(r.status()).as(r.body()).isEqualTo(201);
    return r.as(io.kairos.protocol.TokenCreated.class).token();
  }

  NodeView node(String name) {
    var reply = api.get("/api/v1/nodes");
    assertThat(reply.status()).as(reply.body()).isEqualTo(200);
    return reply.as(new TypeReference<List<NodeView>>() {}).stream()
        .filter(n -> n.name().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no node " + name + " in " + reply.body()));
  }
}

package io.kairos.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kairos.config.TenancyYaml;
import io.kairos.protocol.JobState;
import io.kairos.protocol.JobView;
import io.kairos.protocol.SubmitResult;
import io.kairos.protocol.agent.ExitReason;
import io.kairos.protocol.agent.Heartbeat;
import io.kairos.protocol.agent.HeartbeatReply;
import io.kairos.protocol.agent.Registered;
import io.kairos.protocol.agent.TaskAssignment;
import io.kairos.protocol.agent.TaskKill;
import io.kairos.protocol.agent.TaskReport;
import io.kairos.protocol.agent.TaskStatus;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Migration for packing against a real controller (Ratis log, HTTP API, scheduler loop) with two
 * agents played by hand, each with 4 GPUs. The tenancy file turns migration on. A checkpointable
 * 2-GPU job A runs on n1 beside a filler, a 2-GPU job B on n2; the filler ends, leaving 2 GPUs free
 * on each node, and a 4-GPU job W waits: no node holds it. The scheduler moves A: it asks A for a
 * checkpoint (the checkpoint signal), A records one, A is stopped, restarts on n2 (the target held
 * for it) told to restore that step, and W starts on n1. The history, the job's message and
 * /metrics say so.
 */
class MigrationEndToEndTest {
  static final String TENANCY =
      """
      queues:
        - name: default
          quotas: {gpu:H100: {nominal: 16}, cpu: {nominal: 128}, memory: {nominal: 1Ti}}
      scheduling:
        migration: {enabled: true, protectionWindow: 1h, restartCost: 10s}
      """;

  static final String CKPT_JOB =
      "{\"command\":[\"python3\",\"train.py\"],\"gpus\":2,\"timeLimit\":\"10h\","
          + "\"checkpoint\":{\"signal\":\"SIGUSR2\",\"timeout\":\"5m\",\"every\":\"10m\"}}";
  static final String PLAIN_JOB =
      "{\"command\":[\"sleep\",\"600\"],\"gpus\":2,\"timeLimit\":\"10h\"}";

  @TempDir Path dir;
  Controller controller;
  TestApi api;
  TestApi join;

  @BeforeEach
  void start() throws Exception {
    controller =
        Controller.start(
            ControllerConfig.single(dir, "127.0.0.1", 0)
                .withRunAs(TestApi.SINGLE_USER)
                .withDetection(AgentProtocolTest.PATIENT)
                .withLease(io.kairos.control.agent.LeaseSettings.PATIENT)
                .withTenancy(TenancyYaml.parse(TENANCY, "tenancy.yaml")));
    Leaders.awaitLeader(controller, Duration.ofSeconds(30));
    api = new TestApi(controller.url(), controller.adminToken());
    join = api.as(controller.joinToken());
  }

  @AfterEach
  void stop() throws IOException {
    if (controller != null) {
      controller.close();
    }
  }

  /** An agent that reports what it runs on every heartbeat. */
  final class Agent {
    final String name;
    long epoch;
    final Map<Long, TaskAssignment> running = new LinkedHashMap<>();
    final List<TaskKill> kills = new ArrayList<>();

    Agent(String name) {
      this.name = name;
      var reply = join.post("/api/v1/agents/register", ControllerApiTest.node(name, 4));
      assertThat(reply.status()).as(reply.body()).isEqualTo(200);
      epoch = reply.as(Registered.class).epoch();
    }

    HeartbeatReply beat(TaskReport... extra) {
      var reports = new ArrayList<TaskReport>();
      for (TaskAssignment t : running.values()) {
        reports.add(AgentProtocolTest.report(t, TaskStatus.RUNNING));
      }
      reports.addAll(List.of(extra));
      var reply =
          join.asNode(name)
              .post("/api/v1/agents/heartbeat", new Heartbeat(name, epoch, reports, 0, null));
      assertThat(reply.status()).as(reply.body()).isEqualTo(200);
      HeartbeatReply r = reply.as(HeartbeatReply.class);
      for (TaskAssignment t : r.launch()) {
        running.put(t.jobId(), t);
      }
      kills.addAll(r.kill());
      return r;
    }

    /** Heartbeats until {@code jobId} is launched here; its assignment. */
    TaskAssignment awaitLaunch(long jobId, int attempt) {
      return await()
          .atMost(Duration.ofSeconds(60))
          .until(
              () -> {
                beat();
                TaskAssignment t = running.get(jobId);
                return t != null && t.attempt() == attempt ? t : null;
              },
              t -> t != null);
    }

    /** Heartbeats until the controller sends a kill for {@code jobId} matching {@code ask}. */
    TaskKill awaitKill(long jobId, boolean ask) {
      return await()
          .atMost(Duration.ofSeconds(60))
          .until(
              () -> {
                beat();
                return kills.stream()
                    .filter(k -> k.jobId() == jobId && (k.checkpointSignal() != null) == ask)
                    .findFirst()
                    .orElse(null);
              },
              k -> k != null);
    }

    /** Reports {@code jobId}'s task ended here. */
    void ended(long jobId, int exitCode, ExitReason reason) {
      TaskAssignment t = running.remove(jobId);
      beat(AgentProtocolTest.exited(t, exitCode, reason));
    }
  }

  long submit(String body) {
    var reply = api.post("/api/v1/jobs", body);
    assertThat(reply.status()).as(reply.body()).isEqualTo(201);
    return reply.as(SubmitResult.class).id();
  }

  JobView job(long id) {
    return api.get("/api/v1/jobs/" + id).as(JobView.class);
  }

  @Test
  void aCheckpointableJobIsMovedSoThatAWaitingGangStarts() {
    var n1 = new Agent("n1");
    long a = submit(CKPT_JOB);
    TaskAssignment a1 = n1.awaitLaunch(a, 1);
    long filler = submit(PLAIN_JOB);
    n1.awaitLaunch(filler, 1);
    var n2 = new Agent("n2");
    long b = submit(PLAIN_JOB);
    n2.awaitLaunch(b, 1);
    n1.ended(filler, 0, null);
    // 2 GPUs free on each node; W needs 4 on one node.
    long w = submit("{\"command\":[\"sleep\",\"60\"],\"gpus\":4,\"timeLimit\":\"1h\"}");

    // A is asked for a checkpoint (its own signal), not stopped yet.
    TaskKill ask = n1.awaitKill(a, true);
    assertThat(ask.checkpointSignal()).isEqualTo("USR2");
    assertThat(job(a).state()).isEqualTo(JobState.RUNNING);
    assertThat(job(a).message()).startsWith("migrated to n2 for job " + w);
    var recorded =
        api.as(a1.jobToken()).post("/api/v1/jobs/" + a + "/checkpoints", CheckpointApiTest.ok(7));
    assertThat(recorded.status()).as(recorded.body()).isEqualTo(200);

    // Once the checkpoint is recorded, A is stopped; it restarts on n2, told to restore step 7.
    n1.awaitKill(a, false);
    n1.ended(a, 143, ExitReason.KILLED);
    TaskAssignment a2 = n2.awaitLaunch(a, 2);
    assertThat(a2.nodes()).containsExactly("n2");
    assertThat(a2.checkpoint().restoreStep()).isEqualTo(7L);
    // W starts on n1, the node A left.
    TaskAssignment w1 = n1.awaitLaunch(w, 1);
    assertThat(w1.gpus()).hasSize(4);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> job(w).state() == JobState.RUNNING && job(a).state() == JobState.RUNNING);

    JobView moved = job(a);
    assertThat(moved.attempt()).isEqualTo(2);
    assertThat(moved.requeues()).as("a move is no failure").isZero();
    assertThat(moved.message())
        .startsWith("migrated to n2 for job " + w)
        .endsWith("after checkpoint at step 7");
    assertThat(job(b).attempt()).as("B, which declares no checkpoints, never moved").isEqualTo(1);

    String metrics = api.get("/metrics").body();
    var m =
        Pattern.compile("kairos_scheduler_decisions_total\\{decision=\"migrate\"[^}]*} ([0-9.]+)")
            .matcher(metrics);
    assertThat(m.find()).as("migrate counter in /metrics").isTrue();
    assertThat(Double.parseDouble(m.group(1))).isEqualTo(1.0);
  }

  /**
   * A move that never completes: A (checkpoint timeout 5 s) never checkpoints and its node never
   * reports it stopped. Its hold on n2 ends by itself at the move plus 5 s plus the restart cost
   * (10 s), through a committed command: the view said until when, the message then says it ended,
   * and a job that excludes n1 starts on n2's 2 free GPUs, which the hold kept from it.
   */
  @Test
  void aHoldWhoseMoveNeverCompletesEndsAfterTheCheckpointTimeoutPlusTheRestartCost() {
    var n1 = new Agent("n1");
    long a = submit(CKPT_JOB.replace("\"5m\"", "\"5s\""));
    n1.awaitLaunch(a, 1);
    long filler = submit(PLAIN_JOB);
    n1.awaitLaunch(filler, 1);
    var n2 = new Agent("n2");
    long b = submit(PLAIN_JOB);
    n2.awaitLaunch(b, 1);
    n1.ended(filler, 0, null);
    long w = submit("{\"command\":[\"sleep\",\"60\"],\"gpus\":4,\"timeLimit\":\"1h\"}");
    n1.awaitKill(a, true);
    assertThat(job(a).message())
        .startsWith("migrated to n2 for job " + w)
        .contains("its nodes are held for it until ");
    long c =
        submit(
            "{\"command\":[\"sleep\",\"60\"],\"gpus\":2,\"timeLimit\":\"1h\","
                + "\"excludeNodes\":[\"n1\"]}");
    // No checkpoint, and n1 never reports A's end: A stays stopping, n2's free half stays held.
    await()
        .atMost(Duration.ofSeconds(8))
        .pollInterval(Duration.ofMillis(200))
        .untilAsserted(
            () -> {
              n2.beat();
              assertThat(job(c).state())
                  .as("C waits: n2 is held for A")
                  .isEqualTo(JobState.PENDING);
            });
    // The hold ends 15 s after the move; C starts on n2.
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(200))
        .untilAsserted(
            () ->
                assertThat(job(a).message())
                    .as("A: %s; C: %s", job(a), job(c))
                    .startsWith("the hold on n2 ended at "));
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(200))
        .untilAsserted(
            () -> {
              n2.beat();
              assertThat(job(c).state()).as("C: %s", job(c)).isEqualTo(JobState.RUNNING);
            });
    assertThat(job(c).placement()).extracting(p -> p.node()).containsExactly("n2");
  }

  /** Cancelling a job whose move is under way ends its hold: its target is free at once. */
  @Test
  void cancellingAMovedJobEndsItsHold() {
    var n1 = new Agent("n1");
    long a = submit(CKPT_JOB);
    n1.awaitLaunch(a, 1);
    long filler = submit(PLAIN_JOB);
    n1.awaitLaunch(filler, 1);
    var n2 = new Agent("n2");
    long b = submit(PLAIN_JOB);
    n2.awaitLaunch(b, 1);
    n1.ended(filler, 0, null);
    submit("{\"command\":[\"sleep\",\"60\"],\"gpus\":4,\"timeLimit\":\"1h\"}");
    n1.awaitKill(a, true);
    long c =
        submit(
            "{\"command\":[\"sleep\",\"60\"],\"gpus\":2,\"timeLimit\":\"1h\","
                + "\"excludeNodes\":[\"n1\"]}");
    var cancel = api.post("/api/v1/jobs/" + a + "/cancel", "{}");
    assertThat(cancel.status()).as(cancel.body()).isEqualTo(200);
    TaskAssignment c2 = n2.awaitLaunch(c, 1);
    assertThat(c2.nodes()).containsExactly("n2");
  }

  @Test
  void badMigrationSettingsAreRefusedWith400NamingTheFieldAndChangeNothing() {
    String before = api.get("/api/v1/config").body();
    for (var c :
        List.of(
            List.of(
                "{enabled: true, consolidationGain: 2}", "scheduling.migration.consolidationGain"),
            List.of(
                "{enabled: true, protectionWindow: -1h}", "scheduling.migration.protectionWindow"),
            List.of("{enabled: true, restartCost: soon}", "scheduling.migration.restartCost"),
            List.of("{enabled: maybe}", "scheduling.migration.enabled"),
            List.of("{enabled: true, window: 1h}", "scheduling.migration"))) {
      String yaml =
          TENANCY.replace("{enabled: true, protectionWindow: 1h, restartCost: 10s}", c.get(0));
      var reply = api.post("/api/v1/config", Map.of("yaml", yaml));
      BadInputTest.assertProblem(reply, 400, "yaml");
      assertThat(reply.body()).as(c.get(0)).contains(c.get(1));
    }
    assertThat(api.get("/api/v1/config").body()).isEqualTo(before);
  }
}

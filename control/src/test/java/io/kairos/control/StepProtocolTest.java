package io.kairos.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kairos.protocol.JobState;
import io.kairos.protocol.JobView;
import io.kairos.protocol.StepView;
import io.kairos.protocol.SubmitResult;
import io.kairos.protocol.agent.Heartbeat;
import io.kairos.protocol.agent.HeartbeatReply;
import io.kairos.protocol.agent.Registered;
import io.kairos.protocol.agent.TaskAssignment;
import io.kairos.protocol.agent.TaskReport;
import io.kairos.protocol.agent.TaskStatus;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Job steps (Kairos' srun) against a real controller, with agents played by hand-made heartbeats:
 * several processes per node, the job's step credential and what it may reach, a step's layout
 * inside the allocation, its launch and its end by Slurm's rule.
 */
class StepProtocolTest {
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
                .withLease(io.kairos.control.agent.LeaseSettings.PATIENT));
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

  /** An agent played by hand: registers, then heartbeats what it is told. */
  final class Node {
    final String name;
    long epoch;

    Node(String name, int gpus) {
      this.name = name;
      var reply = join.post("/api/v1/agents/register", ControllerApiTest.node(name, gpus));
      assertThat(reply.status()).as(reply.body()).isEqualTo(200);
      epoch = reply.as(Registered.class).epoch();
    }

    HeartbeatReply beat(TaskReport... tasks) {
      var reply =
          join.asNode(name)
              .post(
                  "/api/v1/agents/heartbeat", new Heartbeat(name, epoch, List.of(tasks), 0, null));
      assertThat(reply.status()).as(reply.body()).isEqualTo(200);
      return reply.as(HeartbeatReply.class);
    }
  }

  long submit(String body) {
    var reply = api.post("/api/v1/jobs", body);
    assertThat(reply.status()).as(reply.body()).isEqualTo(201);
    return reply.as(SubmitResult.class).id();
  }

  JobView awaitState(long id, JobState state) {
    return await()
        .atMost(Duration.ofSeconds(15))
        .pollInterval(Duration.ofMillis(50))
        .until(() -> api.get("/api/v1/jobs/" + id).as(JobView.class), j -> j.state() == state);
  }

  static TaskReport report(TaskAssignment t, TaskStatus status, Integer exit, List<Integer> codes) {
    long now = System.currentTimeMillis();
    boolean ended = status == TaskStatus.EXITED;
    return new TaskReport(
        t.jobId(),
        t.attempt(),
        t.task(),
        status,
        exit,
        null,
        null,
        now - 10,
        ended ? now : null,
        t.step(),
        codes);
  }

  /** A 2-node job, 2 processes per node, one GPU each; both nodes hold their launch. */
  record Running(long id, Node a, Node b, TaskAssignment ta, TaskAssignment tb) {}

  Running runTwoByTwo() {
    var a = new Node("a", 2);
    var b = new Node("b", 2);
    long id =
        submit(
            "{\"command\":[\"python\",\"train.py\"],\"gpus\":4,\"gpusPerNode\":2,"
                + "\"ntasksPerNode\":2,\"gpusPerTask\":1}");
    awaitState(id, JobState.RUNNING);
    TaskAssignment ta = a.beat().launch().getFirst();
    TaskAssignment tb = b.beat().launch().getFirst();
    return new Running(id, a, b, ta, tb);
  }

  @Test
  void eachNodesEntryStartsItsProcessesWithTheJobsCredential() {
    var r = runTwoByTwo();
    for (TaskAssignment t : List.of(r.ta(), r.tb())) {
      assertThat(t.tasksPerNode()).containsExactly(2, 2);
      assertThat(t.gpusPerTask()).isEqualTo(1);
      assertThat(t.worldSize()).isEqualTo(4);
      assertThat(t.jobToken()).as("the job's step credential").startsWith("kstep");
    }
    assertThat(r.ta().jobToken()).isEqualTo(r.tb().jobToken());
    assertThat(r.ta().firstRank() + r.tb().firstRank()).isEqualTo(2);
    var whoami = api.as(r.ta().jobToken()).get("/api/v1/whoami");
    assertThat(whoami.status()).as(whoami.body()).isEqualTo(200);
  }

  @Test
  void aStepStartsInsideTheAllocationAndEndsWithSrunsExitCode() {
    var r = runTwoByTwo();
    var job = api.as(r.ta().jobToken());
    var started =
        job.post("/api/v1/jobs/" + r.id() + "/steps", "{\"command\":[\"hostname\"],\"ntasks\":3}");
    assertThat(started.status()).as(started.body()).isEqualTo(201);
    StepView step = started.as(StepView.class);
    assertThat(step.step()).isZero();
    assertThat(step.nodes()).containsExactlyInAnyOrder("a", "b");
    assertThat(step.tasksPerNode()).containsExactly(2, 1);
    assertThat(step.state()).isEqualTo(StepView.RUNNING);

    TaskAssignment sa = stepLaunch(r.a(), r.ta());
    TaskAssignment sb = stepLaunch(r.b(), r.tb());
    assertThat(sa.step()).isZero();
    assertThat(sa.command()).containsExactly("hostname");
    assertThat(sa.jobNodes()).containsExactlyInAnyOrder("a", "b");
    assertThat(sa.jobToken()).isEqualTo(r.ta().jobToken());
    TaskAssignment first = sa.task() == 0 ? sa : sb;
    TaskAssignment second = sa.task() == 0 ? sb : sa;
    Node firstNode = sa.task() == 0 ? r.a() : r.b();
    Node secondNode = sa.task() == 0 ? r.b() : r.a();
    TaskAssignment firstJob = sa.task() == 0 ? r.ta() : r.tb();
    TaskAssignment secondJob = sa.task() == 0 ? r.tb() : r.ta();

    // Ranks 0,1 exit 0 and 2; rank 2 exits 1: srun exits with the highest, 2.
    firstNode.beat(
        report(firstJob, TaskStatus.RUNNING, null, null),
        report(first, TaskStatus.EXITED, 2, List.of(0, 2)));
    secondNode.beat(
        report(secondJob, TaskStatus.RUNNING, null, null),
        report(second, TaskStatus.EXITED, 1, null));
    StepView ended = job.get("/api/v1/jobs/" + r.id() + "/steps/0?waitMs=5000").as(StepView.class);
    assertThat(ended.state()).isEqualTo(StepView.FAILED);
    assertThat(ended.exitCode()).isEqualTo(2);
    assertThat(ended.taskExits()).containsExactly(0, 2, 1);
    assertThat(awaitState(r.id(), JobState.RUNNING).state())
        .as("a failed step is srun's business, not the job's")
        .isEqualTo(JobState.RUNNING);

    var next = job.post("/api/v1/jobs/" + r.id() + "/steps", "{\"command\":[\"true\"]}");
    assertThat(next.as(StepView.class).step()).as("steps count up in the job").isEqualTo(1);
  }

  private static TaskAssignment stepLaunch(Node node, TaskAssignment jobTask) {
    HeartbeatReply reply = node.beat(report(jobTask, TaskStatus.RUNNING, null, null));
    assertThat(reply.launch()).singleElement().satisfies(l -> assertThat(l.step()).isNotNull());
    return reply.launch().getFirst();
  }

  @Test
  void aStepThatDoesNotFitTheAllocationIsRefusedInSlurmsWords() {
    var r = runTwoByTwo();
    var job = api.as(r.ta().jobToken());
    var tooMany =
        job.post("/api/v1/jobs/" + r.id() + "/steps", "{\"command\":[\"x\"],\"nodes\":3}");
    assertThat(tooMany.status()).isEqualTo(400);
    assertThat(tooMany.body()).contains("Only allocated 2 nodes asked for 3");
    var elsewhere =
        job.post("/api/v1/jobs/" + r.id() + "/steps", "{\"command\":[\"x\"],\"nodelist\":[\"c\"]}");
    assertThat(elsewhere.status()).isEqualTo(400);
    assertThat(elsewhere.body()).contains("Requested node configuration is not available");
    var noCommand = job.post("/api/v1/jobs/" + r.id() + "/steps", "{\"command\":[]}");
    assertThat(noCommand.status()).isEqualTo(400);
    assertThat(noCommand.body()).contains("command");
  }

  /**
   * The attack: a job's credential (every one of its processes holds it) used against another job,
   * or for anything but its own steps and logs. Each is refused; and once the job has ended the
   * credential is worth nothing.
   */
  @Test
  void aJobsCredentialReachesOnlyItsOwnStepsAndLogs() {
    var r = runTwoByTwo();
    long other = submit("{\"command\":[\"sleep\",\"100\"]}");
    var job = api.as(r.ta().jobToken());

    assertThat(job.post("/api/v1/jobs/" + other + "/steps", "{\"command\":[\"id\"]}").status())
        .as("a step in another job")
        .isEqualTo(403);
    assertThat(job.get("/api/v1/jobs/" + other + "/logs").status())
        .as("another job's logs")
        .isEqualTo(403);
    assertThat(job.get("/api/v1/jobs/" + other).status()).isEqualTo(403);
    assertThat(job.get("/api/v1/jobs/" + other + "/steps/0").status()).isEqualTo(403);
    assertThat(job.post("/api/v1/jobs/" + other + "/steps/0/cancel", "{}").status()).isEqualTo(403);
    assertThat(job.get("/api/v1/jobs").status()).as("listing jobs").isEqualTo(403);
    assertThat(job.post("/api/v1/jobs", "{\"command\":[\"id\"]}").status())
        .as("submitting")
        .isEqualTo(403);
    assertThat(job.post("/api/v1/jobs/" + other + "/cancel", "{}").status()).isEqualTo(403);
    assertThat(job.post("/api/v1/jobs/" + r.id() + "/cancel", "{}").status())
        .as("even cancelling itself: that is its owner's")
        .isEqualTo(403);
    assertThat(job.post("/api/v1/tokens", "{\"user\":\"eve\"}").status()).isEqualTo(403);
    assertThat(job.get("/api/v1/nodes").status()).isEqualTo(403);
    assertThat(job.post("/api/v1/agents/heartbeat", "{}").status()).isEqualTo(403);
    assertThat(job.get("/api/v1/jobs/" + r.id() + "/logs").status())
        .as("its own logs")
        .isNotIn(401, 403);

    // A user who is not the owner cannot use the job's steps either.
    String eve =
        api.post("/api/v1/tokens", "{\"user\":\"eve\"}")
            .as(io.kairos.protocol.TokenCreated.class)
            .token();
    assertThat(
            api.as(eve)
                .post("/api/v1/jobs/" + r.id() + "/steps", "{\"command\":[\"id\"]}")
                .status())
        .isEqualTo(403);
    assertThat(api.as(null).post("/api/v1/jobs/" + r.id() + "/steps", "{}").status())
        .isEqualTo(401);

    // The job ends: its credential goes with it.
    assertThat(api.post("/api/v1/jobs/" + r.id() + "/cancel", "{}").status()).isEqualTo(200);
    r.a().beat(report(r.ta(), TaskStatus.EXITED, 143, null));
    r.b().beat(report(r.tb(), TaskStatus.EXITED, 143, null));
    awaitState(r.id(), JobState.CANCELLED);
    assertThat(job.get("/api/v1/whoami").status()).isEqualTo(401);
    assertThat(job.post("/api/v1/jobs/" + r.id() + "/steps", "{\"command\":[\"id\"]}").status())
        .isEqualTo(401);
  }
}

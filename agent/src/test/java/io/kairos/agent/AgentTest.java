package io.kairos.agent;

import static io.kairos.agent.Assignments.assignment;
import static io.kairos.agent.Assignments.script;
import static io.kairos.agent.Assignments.withBarrier;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.kairos.protocol.agent.ExitReason;
import io.kairos.protocol.agent.Heartbeat;
import io.kairos.protocol.agent.Registration;
import io.kairos.protocol.agent.TaskKill;
import io.kairos.protocol.agent.TaskRef;
import io.kairos.protocol.agent.TaskReport;
import io.kairos.protocol.agent.TaskStatus;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A real agent against {@link FakeController}s, running real processes. */
class AgentTest {
  private static final Duration WAIT = Duration.ofSeconds(10);

  @TempDir Path dataDir;

  private final List<AutoCloseable> closeables = new ArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    for (AutoCloseable c : closeables.reversed()) {
      c.close();
    }
  }

  private FakeController controller() throws IOException {
    var fake = new FakeController();
    closeables.add(fake);
    return fake;
  }

  private Agent agent(List<String> controllers, InstantSource clock) throws IOException {
    return agent(controllers, clock, b -> b);
  }

  private Agent agent(
      List<String> controllers, InstantSource clock, UnaryOperator<AgentConfig.Builder> extra)
      throws IOException {
    return agent(controllers, FakeController.TOKEN, clock, extra);
  }

  private Agent agent(
      List<String> controllers,
      String joinToken,
      InstantSource clock,
      UnaryOperator<AgentConfig.Builder> extra)
      throws IOException {
    var config =
        extra
            .apply(
                AgentConfig.builder(controllers, joinToken, "n1", dataDir)
                    .gpus("2xH100-80GB")
                    .cpus(16)
                    .memoryBytes(64L << 30)
                    .heartbeatWaitMs(200)
                    .killGraceMs(1_000)
                    .cgroups(false)
                    .fenceWatchdog(false)
                    // One user, who is root when the tests run in CI: tasks run as the agent.
                    .allowRootJobs(true))
            .build();
    var agent = new Agent(config, clock, new SplittableRandom(42));
    closeables.add(agent);
    agent.start();
    return agent;
  }

  @Test
  void registersRunsAnAssignmentReportsItsExitAndForgetsIt() throws Exception {
    var fake = controller();
    var agent = agent(List.of(fake.url()), InstantSource.system());
    await().atMost(WAIT).until(() -> !fake.heartbeats.isEmpty());

    Registration registration = fake.registrations.getFirst();
    assertThat(registration.node()).isEqualTo("n1");
    assertThat(registration.address()).isEqualTo(agent.address()).startsWith("http://127.0.0.1:");
    assertThat(registration.gpus()).hasSize(2);
    assertThat(registration.gpus().getFirst().model()).isEqualTo("H100");
    assertThat(registration.cpus()).isEqualTo(16);
    assertThat(registration.nvlinkDomainSize()).isEqualTo(2);
    assertThat(registration.zone()).isEqualTo("zone-0");
    assertThat(fake.heartbeats.getFirst().epoch()).isEqualTo(1);

    var a = script(21, "echo hi; exit 3");
    var key = TaskKey.of(a);
    fake.assign(a);
    await().atMost(WAIT).until(() -> fake.exited.containsKey(key));

    TaskReport report = fake.exited.get(key);
    assertThat(report.status()).isEqualTo(TaskStatus.EXITED);
    assertThat(report.exitCode()).isEqualTo(3);
    await().atMost(WAIT).until(() -> agent.tasks().isEmpty());
    int seen = fake.heartbeats.size();
    await().atMost(WAIT).until(() -> fake.heartbeats.size() > seen);
    assertThat(fake.heartbeats.getLast().tasks()).as("forgotten").isEmpty();
    // The log server takes the log secret the agent registered, never the join token.
    String logToken = fake.registrations.getLast().logToken();
    assertThat(logToken).startsWith("klog_").isNotEqualTo(FakeController.TOKEN);
    assertThat(get(agent.address() + "/logs/21/1/0", logToken).body()).isEqualTo("hi\n");
    assertThat(get(agent.address() + "/logs/21/1/0", FakeController.TOKEN).statusCode())
        .isEqualTo(401);
    assertThat(get(agent.address() + "/healthz", null).body()).isEqualTo("ok");
    // Its own secret, made before it registered, rides on the registration; heartbeats carry it.
    assertThat(registration.credential().secret()).startsWith("knode_");
    assertThat(fake.nodeSecret).isEqualTo(registration.credential().secret());
  }

  @Test
  void aRestartedAgentProvesItselfWithItsOwnSecretWithoutTheJoinToken() throws Exception {
    var fake = controller();
    var first = agent(List.of(fake.url()), InstantSource.system());
    await().atMost(WAIT).until(() -> !fake.heartbeats.isEmpty());
    String secret = fake.registrations.getFirst().credential().secret();
    first.close();

    agent(List.of(fake.url()), null, InstantSource.system(), b -> b);
    await().atMost(WAIT).until(() -> fake.registrations.size() == 2);
    assertThat(fake.registrations.getLast().credential().secret())
        .as("the same secret, kept in the data directory")
        .isEqualTo(secret);
    assertThat(fake.registrationAuthorizations)
        .containsExactly("Bearer " + FakeController.TOKEN, "Bearer " + secret);
    int seen = fake.heartbeats.size();
    await().atMost(WAIT).until(() -> fake.heartbeats.size() > seen);
  }

  @Test
  void anAgentWithNeitherAJoinTokenNorACredentialDoesNotStart() {
    assertThatThrownBy(
            () -> agent(List.of("http://127.0.0.1:1"), null, InstantSource.system(), b -> b))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("no join token");
  }

  /** An admin's reset: the node's secret is refused; the agent stops its tasks and joins again. */
  @Test
  void aRefusedNodeSecretKillsTheTasksAndJoinsAgainWithTheJoinToken() throws Exception {
    var fake = controller();
    agent(List.of(fake.url()), InstantSource.system());
    await().atMost(WAIT).until(() -> !fake.heartbeats.isEmpty());
    var a = script(31, "sleep 60");
    fake.assign(a);
    await().atMost(WAIT).until(() -> fake.lastReport(TaskKey.of(a)).isPresent());
    String secret = fake.nodeSecret;

    fake.nodeSecret = "forgotten by a reset";

    await().atMost(WAIT).until(() -> fake.registrations.size() == 2);
    assertThat(fake.registrationAuthorizations.getLast())
        .isEqualTo("Bearer " + FakeController.TOKEN);
    assertThat(fake.registrations.getLast().credential().secret()).isEqualTo(secret);
    await().atMost(WAIT).until(() -> fake.exited.containsKey(TaskKey.of(a)));
    assertThat(fake.exited.get(TaskKey.of(a)).reason())
        .as("the task was killed when the node's credential was refused")
        .isEqualTo(ExitReason.KILLED);
  }

  @Test
  void followsA421ToTheLeader() throws Exception {
    var follower = controller();
    var leader = controller();
    follower.redirectTo = leader.url() + "/";
    var agent = agent(List.of(follower.url()), InstantSource.system());

    await().atMost(WAIT).until(() -> leader.heartbeats.size() >= 2);

    assertThat(follower.refused.get()).isEqualTo(1);
    assertThat(follower.registrations).isEmpty();
    assertThat(leader.registrations).hasSize(1);
    assertThat(agent.epoch()).isEqualTo(1);
  }

  @Test
  void triesTheNextControllerWhenOneIsUnreachable() throws Exception {
    var fake = controller();
    agent(List.of(deadUrl(), fake.url()), InstantSource.system());

    await().atMost(WAIT).until(() -> !fake.heartbeats.isEmpty());

    assertThat(fake.registrations).hasSize(1);
  }

  @Test
  void aFencedReplyKillsEveryTaskAndRegistersAgain() throws Exception {
    var fake = controller();
    var agent = agent(List.of(fake.url()), InstantSource.system());
    var a = assignment(22, "sleep", "60");
    var key = TaskKey.of(a);
    fake.assign(a);
    await()
        .atMost(WAIT)
        .until(() -> fake.lastReport(key).map(r -> r.status() == TaskStatus.RUNNING).orElse(false));

    fake.fenceNext();
    await().atMost(WAIT).until(() -> fake.exited.containsKey(key));

    assertThat(fake.exited.get(key).reason()).isEqualTo(ExitReason.KILLED);
    assertThat(fake.exited.get(key).message()).contains("fenced");
    assertThat(fake.registrations).hasSize(2);
    assertThat(agent.epoch()).isEqualTo(2);
    Heartbeat reporting = firstHeartbeatReporting(fake, key, TaskStatus.EXITED);
    assertThat(reporting.epoch()).as("the exit is reported in the new epoch").isEqualTo(2);
  }

  @Test
  void aKillInAReplyStopsTheTask() throws Exception {
    var fake = controller();
    agent(List.of(fake.url()), InstantSource.system());
    var a = assignment(23, "sleep", "60");
    var key = TaskKey.of(a);
    fake.assign(a);
    await()
        .atMost(WAIT)
        .until(() -> fake.lastReport(key).map(r -> r.status() == TaskStatus.RUNNING).orElse(false));

    fake.kill(new TaskKill(23, 1, "cancelled by alice"));
    await().atMost(WAIT).until(() -> fake.exited.containsKey(key));

    assertThat(fake.exited.get(key).reason()).isEqualTo(ExitReason.KILLED);
    assertThat(fake.exited.get(key).exitCode()).isEqualTo(143);
  }

  @Test
  void anExitIsReportedWithoutWaitingOutTheLongPoll() throws Exception {
    var fake = controller();
    fake.heartbeatIntervalMs = 60_000;
    fake.leaseMs = 300_000;
    agent(List.of(fake.url()), InstantSource.system(), b -> b.heartbeatWaitMs(60_000));
    await().atMost(WAIT).until(() -> !fake.heartbeats.isEmpty());
    var a = script(24, "sleep 0.5; exit 7");
    var key = TaskKey.of(a);

    fake.assign(a);

    // The controller holds each heartbeat for a minute; the exit must still arrive in seconds.
    await().atMost(WAIT).until(() -> fake.exited.containsKey(key));
    assertThat(fake.exited.get(key).exitCode()).isEqualTo(7);
    assertThat(fake.heartbeats).anySatisfy(hb -> assertThat(hb.waitMs()).isEqualTo(60_000));
  }

  @Test
  void anAgentWithoutAcceptedHeartbeatsForALeaseKillsItsTasks() throws Exception {
    var fake = controller();
    fake.leaseMs = 5_000;
    var clock = new ManualClock();
    var agent = agent(List.of(fake.url()), clock);
    var a = assignment(25, "sleep", "60");
    var key = TaskKey.of(a);
    fake.assign(a);
    await()
        .atMost(WAIT)
        .until(() -> fake.lastReport(key).map(r -> r.status() == TaskStatus.RUNNING).orElse(false));

    fake.failWith = 503;
    // The tasks die the fence margin before the lease ends, so that they are dead by its end.
    clock.advance(Duration.ofMillis(5_000 - AgentConfig.DEFAULT_FENCE_MARGIN_MS));
    // A few refused heartbeats (with backoff between them) leave time for several ticks.
    await().atMost(WAIT).until(() -> fake.refused.get() >= 3);
    assertThat(report(agent, key).status())
        .as("at the lease less the fence margin, not past it")
        .isEqualTo(TaskStatus.RUNNING);
    clock.advance(Duration.ofMillis(1));

    await().atMost(WAIT).until(() -> report(agent, key).status() == TaskStatus.EXITED);
    assertThat(report(agent, key).reason()).isEqualTo(ExitReason.NODE_UNHEALTHY);
    assertThat(report(agent, key).message()).contains("lease expired");
  }

  @Test
  void aRefusedJoinTokenStopsTheAgent() throws Exception {
    var fake = controller();
    fake.failWith = 401;
    var agent = agent(List.of(fake.url()), InstantSource.system());

    AgentExit exit =
        CompletableFuture.supplyAsync(
                () -> {
                  try {
                    return agent.awaitStop();
                  } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                  }
                })
            .get(WAIT.toSeconds(), TimeUnit.SECONDS);

    assertThat(exit.isFailure()).isTrue();
    assertThat(exit.message()).contains("join token");
    assertThat(fake.refused.get()).isEqualTo(1);
  }

  @Test
  void closeStopsRunningTasks() throws Exception {
    var fake = controller();
    var agent = agent(List.of(fake.url()), InstantSource.system());
    var a = assignment(26, "sleep", "60");
    var key = TaskKey.of(a);
    fake.assign(a);
    await().atMost(WAIT).until(() -> agent.tasks().size() == 1);

    agent.close();

    assertThat(report(agent, key).status()).isEqualTo(TaskStatus.EXITED);
    assertThat(report(agent, key).reason()).isEqualTo(ExitReason.KILLED);
    assertThat(agent.awaitStop().isFailure()).isFalse();
  }

  @Test
  void aGoInAReplyStartsAReadyTask() throws Exception {
    var fake = controller();
    agent(List.of(fake.url()), InstantSource.system());
    var a = withBarrier(script(27, "touch started; exit 5"));
    var key = TaskKey.of(a);
    Path marker = LaunchSpec.taskDir(dataDir, key).resolve("started");
    fake.assign(a);
    await()
        .atMost(WAIT)
        .until(() -> fake.lastReport(key).map(r -> r.status() == TaskStatus.READY).orElse(false));
    assertThat(marker).as("held at the barrier").doesNotExist();

    fake.go(new TaskRef(27, 1, 0));
    await().atMost(WAIT).until(() -> fake.exited.containsKey(key));

    TaskReport report = fake.exited.get(key);
    assertThat(report.exitCode()).isEqualTo(5);
    assertThat(report.reason()).isNull();
    assertThat(report.startedAtMs()).isNotNull();
    assertThat(marker).exists();
  }

  @Test
  void aFailingHealthCheckRidesOnHeartbeatsAndRefusesTasks() throws Exception {
    var fake = controller();
    agent(
        List.of(fake.url()),
        InstantSource.system(),
        b ->
            b.healthCheckProgram(List.of("/bin/sh", "-c", "echo disk full; exit 1"))
                .healthIntervalMs(1_000));

    await()
        .atMost(WAIT)
        .alias("a heartbeat reports the failed check")
        .until(
            () ->
                fake.heartbeats.stream()
                    .anyMatch(
                        hb ->
                            hb.problems() != null
                                && hb.problems().stream().anyMatch(p -> p.contains("disk full"))));
    var a = script(28, "touch started");
    var key = TaskKey.of(a);
    fake.assign(a);
    await().atMost(WAIT).until(() -> fake.exited.containsKey(key));

    TaskReport report = fake.exited.get(key);
    assertThat(report.reason()).isEqualTo(ExitReason.NODE_UNHEALTHY);
    assertThat(report.message()).contains("disk full");
    assertThat(report.startedAtMs()).isNull();
    assertThat(LaunchSpec.taskDir(dataDir, key).resolve("started")).doesNotExist();
  }

  @Test
  void aFencedReplySigkillsEveryTaskWithoutAGrace() throws Exception {
    var fake = controller();
    // The clock never moves, so a stop's grace never ends: only an immediate SIGKILL ends the task.
    var agent = agent(List.of(fake.url()), new ManualClock(), b -> b.killGraceMs(30_000));
    var a = script(29, "trap '' TERM; touch ready; while :; do sleep 0.1; done");
    var key = TaskKey.of(a);
    fake.assign(a);
    Path ready = LaunchSpec.taskDir(dataDir, key).resolve("ready");
    await().atMost(WAIT).until(() -> Files.exists(ready));

    fake.fenceNext();
    await().atMost(WAIT).until(() -> fake.exited.containsKey(key));

    TaskReport report = fake.exited.get(key);
    assertThat(report.exitCode()).as("128 + SIGKILL").isEqualTo(137);
    assertThat(report.reason()).isEqualTo(ExitReason.KILLED);
    assertThat(report.message()).contains("fenced");
    assertThat(agent.epoch()).isEqualTo(2);
  }

  private static TaskReport report(Agent agent, TaskKey key) {
    return agent.tasks().stream()
        .filter(r -> new TaskKey(r.jobId(), r.attempt(), r.task()).equals(key))
        .findFirst()
        .orElseThrow();
  }

  private static Heartbeat firstHeartbeatReporting(
      FakeController fake, TaskKey key, TaskStatus status) {
    return fake.heartbeats.stream()
        .filter(
            hb ->
                hb.tasks().stream()
                    .anyMatch(
                        r ->
                            new TaskKey(r.jobId(), r.attempt(), r.task()).equals(key)
                                && r.status() == status))
        .findFirst()
        .orElseThrow();
  }

  private static HttpResponse<String> get(String url, String token) throws Exception {
    try (var client = HttpClient.newHttpClient()) {
      var request = HttpRequest.newBuilder(URI.create(url)).GET();
      if (token != null) {
        request.header("Authorization", "Bearer " + token);
      }
      return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
  }

  /** A URL on which nothing listens (a port that was free a moment ago). */
  private static String deadUrl() throws IOException {
    try (var socket = new ServerSocket()) {
      socket.bind(new InetSocketAddress("127.0.0.1", 0));
      return "http://127.0.0.1:" + socket.getLocalPort();
    }
  }
}

package io.kairos.control;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.type.TypeReference;
import io.kairos.protocol.JobState;
import io.kairos.protocol.JobView;
import io.kairos.protocol.NodeView;
import io.kairos.protocol.TaskPlacement;
import io.kairos.protocol.agent.Heartbeat;
import io.kairos.protocol.agent.HeartbeatReply;
import io.kairos.protocol.agent.Registered;
import io.kairos.protocol.agent.TaskAssignment;
import io.kairos.protocol.agent.TaskRef;
import io.kairos.protocol.agent.TaskReport;
import io.kairos.protocol.agent.TaskStatus;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * DESIGN.md invariants 1 and 5 across crashes: one replica as a process, killed with SIGKILL in the
 * middle of a submission storm (4 clients, single and batch submits, cancels) while a fake agent
 * runs and finishes tasks, then restarted on the same data directory, many rounds over. After each
 * restart: every acknowledged job exists as it was sent, every acknowledged cancel held, ids are
 * unique, and no GPU is held by two running jobs.
 *
 * <p>Seeded: the run's seed is printed, and each round's; {@code -Dkairos.crash.seed=S} replays a
 * run's choices (what is submitted, when the kill comes), {@code -Dkairos.crash.rounds=N} sets the
 * rounds (default 20). The timing of a real process is not replayable, the choices are.
 */
class CrashRecoveryIT {
  static final int NODES = 2;
  static final int GPUS_PER_NODE = 8;

  @TempDir Path tmp;
  ControllerProcess server;

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
  }

  @Test
  void acknowledgedWorkSurvivesKill9AndNoGpuIsEverAllocatedTwice() throws Exception {
    long seed = Long.getLong("kairos.crash.seed", System.nanoTime());
    int rounds = Integer.getInteger("kairos.crash.rounds", 20);
    System.out.println(
        "CrashRecoveryIT seed " + seed + " (replay: -Dkairos.crash.seed=" + seed + ")");
    var master = new Random(seed);
    int port = ControllerProcess.freePortPair();
    server = new ControllerProcess(tmp.resolve("data"), port, "", tmp.resolve("controller.log"));
    long t0 = System.nanoTime();
    server.launch().awaitReady(Duration.ofSeconds(60));
    var admin = server.api();
    awaitWritable(admin);
    for (int n = 1; n <= NODES; n++) {
      register(admin.as(server.joinToken()), "n" + n);
    }

    var acks = new Acks();
    var cancelled = ConcurrentHashMap.<Long>newKeySet();
    var stats = new Stats();
    for (int round = 1; round <= rounds; round++) {
      long roundSeed = master.nextLong();
      var rnd = new Random(roundSeed);
      int delayMs = 50 + rnd.nextInt(351);
      System.out.printf("round %d seed %d: kill after %d ms%n", round, roundSeed, delayMs);
      String context = "round " + round + " (seed " + seed + ", round seed " + roundSeed + ")";
      var roundAcks = new Acks();

      admin = server.api();
      var agent = admin.as(server.joinToken());
      if (rnd.nextInt(4) == 0) {
        register(agent, "n" + (1 + rnd.nextInt(NODES))); // requeues that node's running jobs
      }
      var stop = new AtomicBoolean();
      var threads = new ArrayList<Thread>();
      var agentRandom = new Random(rnd.nextLong());
      var epochs = epochs(admin);
      var agentStarted = new CountDownLatch(2);
      threads.add(
          Thread.ofPlatform()
              .name("agent")
              .start(() -> fakeAgent(agent, epochs, agentRandom, stop, agentStarted, stats)));
      assertThat(agentStarted.await(30, TimeUnit.SECONDS))
          .as("%s: the fake agent's first heartbeats within 30 s%n%s", context, server.tail())
          .isTrue();
      for (int c = 0; c < 4; c++) {
        var client = new Random(rnd.nextLong());
        String tag = "r" + round + "c" + c;
        TestApi api = admin.as(server.adminToken());
        threads.add(
            Thread.ofPlatform()
                .name("client-" + c)
                .start(() -> storm(api, client, tag, stop, acks, roundAcks, cancelled, stats)));
      }

      Thread.sleep(delayMs); // a random point in the storm, then the crash
      server.kill9();
      stop.set(true);
      for (Thread t : threads) {
        t.join(30_000);
        assertThat(t.isAlive()).as("%s: client %s still running", context, t.getName()).isFalse();
      }

      long restart = System.nanoTime();
      server.launch().awaitReady(Duration.ofSeconds(60));
      admin = server.api();
      awaitWritable(admin);
      stats.restartMs.add((System.nanoTime() - restart) / 1_000_000);
      acks.merge(roundAcks);
      stats.maxRunning =
          Math.max(stats.maxRunning, verify(admin, context, acks, roundAcks, cancelled));
      stats.rounds++;
    }
    System.out.printf(
        "CrashRecoveryIT: %d rounds, %d jobs acknowledged (%d in batches), "
            + "%d cancels acknowledged, %d tasks launched and %d ends recorded by the fake agent, "
            + "at most %d jobs running at a check, restart to writable %s ms, total %d s%n",
        stats.rounds,
        acks.byId.size(),
        stats.batched.get(),
        cancelled.size(),
        stats.launched.get(),
        stats.ended.get(),
        stats.maxRunning,
        summary(stats.restartMs),
        (System.nanoTime() - t0) / 1_000_000_000);
    assertThat(acks.byId).as("the storms got jobs acknowledged").isNotEmpty();
  }

  /**
   * Every acknowledged job and cancel is there, ids are unique, no GPU is used twice. Returns how
   * many jobs run.
   */
  int verify(TestApi admin, String context, Acks all, Acks round, Set<Long> cancelled) {
    String tail = "\n" + context + "; controller log tail:\n" + server.tail();
    assertThat(all.duplicates).as("ids acknowledged twice" + tail).isEmpty();
    // This round's acknowledged jobs, one by one.
    for (var e : round.byId.entrySet()) {
      var reply = admin.get("/api/v1/jobs/" + e.getKey());
      assertThat(reply.status())
          .as("GET job %d after the crash: %s%s", e.getKey(), reply.body(), tail)
          .isEqualTo(200);
      var job = reply.as(JobView.class);
      assertThat(job.name())
          .as("name of job %d%s", e.getKey(), tail)
          .isEqualTo(e.getValue().name());
      assertThat(job.command())
          .as("command of job %d%s", e.getKey(), tail)
          .isEqualTo(e.getValue().command());
    }
    // Every round's, in one listing.
    Map<Long, JobView> listed = Acks.listed(admin);
    assertThat(all.lostOrChanged(listed)).as("acknowledged jobs lost or changed" + tail).isEmpty();
    for (long id : cancelled) {
      assertThat(listed.get(id).state())
          .as("job %d, whose cancel was acknowledged%s", id, tail)
          .isEqualTo(JobState.CANCELLED);
    }
    // Invariant 1: no (node, GPU) twice among running jobs, and no node over its GPUs.
    var nodes = admin.get("/api/v1/nodes").as(new TypeReference<List<NodeView>>() {});
    var gpusOf = new HashMap<String, Integer>();
    for (NodeView n : nodes) {
      gpusOf.put(n.name(), n.gpus());
      assertThat(n.gpusUsed())
          .as("GPUs used on %s%s", n.name(), tail)
          .isLessThanOrEqualTo(n.gpus());
    }
    var holder = new HashMap<String, Long>();
    var usedPerNode = new HashMap<String, Integer>();
    for (JobView j : listed.values()) {
      if (j.state() != JobState.RUNNING) {
        continue;
      }
      assertThat(j.placement()).as("running job %d has a placement%s", j.id(), tail).isNotEmpty();
      for (TaskPlacement t : j.placement()) {
        assertThat(gpusOf).as("job %d runs on a known node%s", j.id(), tail).containsKey(t.node());
        for (int g : t.gpus()) {
          assertThat(g)
              .as("GPU index on %s%s", t.node(), tail)
              .isBetween(0, gpusOf.get(t.node()) - 1);
          Long other = holder.put(t.node() + "/" + g, j.id());
          assertThat(other)
              .as("GPU %s/%d held by jobs %s and %d%s", t.node(), g, other, j.id(), tail)
              .isNull();
        }
        usedPerNode.merge(t.node(), t.gpus().size(), Integer::sum);
      }
    }
    usedPerNode.forEach(
        (node, used) ->
            assertThat(used)
                .as("GPUs held on %s%s", node, tail)
                .isLessThanOrEqualTo(gpusOf.get(node)));
    return (int) listed.values().stream().filter(j -> j.state() == JobState.RUNNING).count();
  }

  /**
   * Submits (70% single, 20% batches of 2-10) into {@code round} and cancels (10%) jobs of this
   * round or earlier ones ({@code all}) until the server goes away.
   */
  static void storm(
      TestApi api,
      Random rnd,
      String tag,
      AtomicBoolean stop,
      Acks all,
      Acks round,
      Set<Long> cancelled,
      Stats stats) {
    int n = 0;
    while (!stop.get()) {
      int op = rnd.nextInt(10);
      TestApi.Reply reply;
      if (op < 9) {
        boolean batch = op >= 7;
        var jobs = new ArrayList<Acks.Sent>();
        for (int i = batch ? 2 + rnd.nextInt(9) : 1; i > 0; i--) {
          jobs.add(Acks.randomJob(rnd, tag + "-" + n++));
        }
        reply = round.submit(api, jobs, batch);
        if (batch && reply != null && reply.status() == 201) {
          stats.batched.addAndGet(jobs.size());
        }
      } else {
        var ids = new ArrayList<>((rnd.nextBoolean() ? round : all).byId.keySet());
        if (ids.isEmpty()) {
          continue;
        }
        long id = ids.get(rnd.nextInt(ids.size()));
        reply = Acks.call(() -> api.post("/api/v1/jobs/" + id + "/cancel", ""));
        if (reply != null && reply.status() == 200) {
          cancelled.add(id);
        }
      }
      if (reply == null) {
        return; // killed
      }
    }
  }

  /**
   * A fake agent for both nodes: long-polls heartbeats, takes every launch and reports it exited
   * (mostly 0, sometimes 1) on the next heartbeat, so GPUs free up and new jobs start.
   */
  static void fakeAgent(
      TestApi agent,
      Map<String, Long> epochs,
      Random rnd,
      AtomicBoolean stop,
      CountDownLatch started,
      Stats stats) {
    var held = new HashMap<String, List<TaskReport>>();
    epochs.keySet().forEach(n -> held.put(n, new ArrayList<>()));
    while (!stop.get()) {
      for (var e : epochs.entrySet()) {
        var reports = held.get(e.getKey());
        var reply =
            Acks.call(
                () ->
                    agent
                        .asNode(e.getKey())
                        .post(
                            "/api/v1/agents/heartbeat",
                            new Heartbeat(e.getKey(), e.getValue(), List.copyOf(reports), 100)));
        if (reply == null) {
          return; // killed
        }
        if (reply.status() != 200) {
          continue;
        }
        var hb = reply.as(HeartbeatReply.class);
        if (hb.fenced()) {
          return;
        }
        for (TaskRef f : hb.forget()) {
          reports.removeIf(
              r -> r.jobId() == f.jobId() && r.attempt() == f.attempt() && r.task() == f.task());
          stats.ended.incrementAndGet();
        }
        stats.launched.addAndGet(hb.launch().size());
        for (TaskAssignment a : hb.launch()) {
          int exit = rnd.nextInt(5) == 0 ? 1 : 0;
          reports.add(
              new TaskReport(
                  a.jobId(),
                  a.attempt(),
                  a.task(),
                  TaskStatus.EXITED,
                  exit,
                  null,
                  null,
                  System.currentTimeMillis(),
                  System.currentTimeMillis()));
        }
      }
      // Two heartbeats per node (launches taken, then their exits reported): the storm may begin.
      started.countDown();
    }
  }

  static Map<String, Long> epochs(TestApi api) {
    var out = new LinkedHashMap<String, Long>();
    for (NodeView n : api.get("/api/v1/nodes").as(new TypeReference<List<NodeView>>() {})) {
      out.put(n.name(), n.epoch());
    }
    return out;
  }

  static void register(TestApi agent, String node) {
    var reply = agent.post("/api/v1/agents/register", ControllerApiTest.node(node, GPUS_PER_NODE));
    assertThat(reply.status()).as(reply.body()).isEqualTo(200);
    assertThat(reply.as(Registered.class).epoch()).isPositive();
  }

  /**
   * Waits (bounded) until a write commits: the first time (no node yet) a token for a throwaway
   * user, after that a resume of n1 (a no-op). Once one commits, the restarted replica leads and
   * has applied every entry before it, so reads see all that was acknowledged.
   */
  void awaitWritable(TestApi admin) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    TestApi.Reply last = null;
    while (System.nanoTime() < deadline) {
      last =
          Acks.call(
              () -> {
                var resume = admin.post("/api/v1/nodes/n1/resume", "");
                return resume.status() == 404
                    ? admin.post("/api/v1/tokens", java.util.Map.of("user", "barrier"))
                    : resume;
              });
      if (last != null && (last.status() == 200 || last.status() == 201)) {
        return;
      }
      Thread.sleep(50);
    }
    throw new AssertionError(
        "no write committed within 60 s of the restart; last reply "
            + (last == null ? "none" : last.status() + " " + last.body())
            + "\n"
            + server.tail());
  }

  static String summary(List<Long> ms) {
    var sorted = new ArrayList<>(ms);
    sorted.sort(null);
    if (sorted.isEmpty()) {
      return "n/a";
    }
    return "median "
        + sorted.get(sorted.size() / 2)
        + ", min "
        + sorted.get(0)
        + ", max "
        + sorted.get(sorted.size() - 1);
  }

  static final class Stats {
    int rounds;
    final List<Long> restartMs = new ArrayList<>();
    final AtomicInteger batched = new AtomicInteger();
    final AtomicInteger ended = new AtomicInteger();
    final AtomicInteger launched = new AtomicInteger();
    int maxRunning;
  }
}

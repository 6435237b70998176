package io.kairos.control;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.type.TypeReference;
import io.kairos.control.accounting.TestStores;
import io.kairos.protocol.JobView;
import io.kairos.protocol.SubmitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The accounting store across a leader change: three replicas as processes sharing one PostgreSQL
 * store, ended jobs forgotten from the replicated state at once (retention 0). Clients submit jobs
 * and cancel them (each cancel ends a job) through all three replicas while the leader is killed
 * with SIGKILL and restarted. Then every job that ended is in the store exactly once, as CANCELLED,
 * and none is left in the replicated state: no record was lost between the store and the log, none
 * written twice. Seeded: {@code -Dkairos.failover.seed=S}.
 */
class AccountingFailoverIT {
  @TempDir Path tmp;
  final List<ControllerProcess> replicas = new ArrayList<>();

  @AfterEach
  void stop() {
    replicas.forEach(ControllerProcess::close);
  }

  @Test
  void everyEndedJobIsInTheStoreExactlyOnceAfterTheLeaderIsKilled() throws Exception {
    var settings = TestStores.settings(TestStores.Kind.POSTGRESQL);
    String url = settings.postgresUrl().orElseThrow();
    Path passwordFile = tmp.resolve("pg.password");
    Files.writeString(passwordFile, TestStores.password().orElse(""));
    long seed = Long.getLong("kairos.failover.seed", System.nanoTime());
    System.out.println("AccountingFailoverIT seed " + seed);
    var rnd = new Random(seed);

    int[] ports = {
      ControllerProcess.freePortPair(),
      ControllerProcess.freePortPair(),
      ControllerProcess.freePortPair()
    };
    String peers = "127.0.0.1:" + ports[0] + ",127.0.0.1:" + ports[1] + ",127.0.0.1:" + ports[2];
    Path ca = tmp.resolve("ca");
    io.kairos.control.tls.CertificateAuthority.create(ca, java.time.Instant.now());
    for (int i = 0; i < 3; i++) {
      replicas.add(
          new ControllerProcess(
                  tmp.resolve("data" + i), ports[i], peers, tmp.resolve("replica" + i + ".log"))
              .with(
                  "--ca-from",
                  ca.toString(),
                  "--accounting",
                  url,
                  "--accounting-password-file",
                  passwordFile.toString(),
                  "--retain-finished-ms",
                  "0",
                  "--retain-finished-count",
                  "0"));
    }
    for (var r : replicas) {
      r.launch();
    }
    for (var r : replicas) {
      r.awaitReady(Duration.ofSeconds(90));
    }
    var helper = new FailoverIT();
    helper.replicas.addAll(replicas);
    ControllerProcess leader = helper.awaitLeader(replicas);

    Set<Long> ended = ConcurrentHashMap.newKeySet();
    Set<Long> submitted = ConcurrentHashMap.newKeySet();
    var live = new CopyOnWriteArrayList<>(replicas);
    Map<ControllerProcess, TestApi> apis = new HashMap<>();
    for (var r : replicas) {
      apis.put(r, r.api());
    }
    var stop = new AtomicBoolean();
    var threads = new ArrayList<Thread>();
    for (int c = 0; c < 3; c++) {
      var client = new Random(rnd.nextLong());
      threads.add(
          Thread.ofPlatform()
              .start(() -> submitAndCancel(client, live, apis, stop, submitted, ended)));
    }
    Thread.sleep(1_500 + rnd.nextInt(1_500));
    live.remove(leader);
    leader.kill9();
    helper.awaitLeader(live);
    Thread.sleep(2_000);
    stop.set(true);
    for (Thread t : threads) {
      t.join(60_000);
    }
    leader.launch().awaitReady(Duration.ofSeconds(90));
    ControllerProcess now = helper.awaitLeader(replicas);
    TestApi api = now.api();
    // Every acknowledged job ends (a cancel whose reply was lost is sent again).
    for (long id : submitted) {
      if (!ended.contains(id)) {
        FailoverIT.pollUntil(
            Duration.ofSeconds(30),
            () -> {
              var r = Acks.call(() -> api.post("/api/v1/jobs/" + id + "/cancel", "{}"));
              return r != null && (r.status() == 200 || r.status() == 409 || r.status() == 404);
            },
            () -> "job " + id + " could not be cancelled");
        ended.add(id);
      }
    }
    System.out.printf(
        "AccountingFailoverIT: %d jobs submitted and ended; leader %s killed%n",
        ended.size(), leader.url());
    assertThat(ended).as("jobs ended during the storm").hasSizeGreaterThan(10);

    // The leader forgets them all once written (retention 0): none stays in the replicated state.
    for (var r : replicas) {
      var each = r.api();
      FailoverIT.pollUntil(
          Duration.ofSeconds(60),
          () -> {
            var reply = Acks.call(() -> each.get("/api/v1/jobs?state=CANCELLED&limit=1000000"));
            return reply != null
                && reply.status() == 200
                && reply.as(new TypeReference<List<JobView>>() {}).isEmpty();
          },
          () -> r.url() + " still holds ended jobs\n" + r.tail());
    }
    // Each is in the store exactly once.
    var rows = new HashMap<Long, Integer>();
    var states = new HashMap<Long, String>();
    try (var c = TestStores.connect(url);
        var s = c.createStatement();
        var rs = s.executeQuery("SELECT job_id, state FROM jobs")) {
      while (rs.next()) {
        rows.merge(rs.getLong(1), 1, Integer::sum);
        states.put(rs.getLong(1), rs.getString(2));
      }
    }
    assertThat(rows.keySet()).as("ended jobs in the store").containsAll(ended);
    assertThat(rows.values()).as("rows per job").allMatch(n -> n == 1);
    for (long id : ended) {
      assertThat(states.get(id)).as("job %d", id).isEqualTo("CANCELLED");
    }
    // And each is still shown, from the store, by any replica.
    long one = ended.iterator().next();
    var shown = replicas.get(0).api().get("/api/v1/jobs/" + one);
    assertThat(shown.status()).as(shown.body()).isEqualTo(200);
  }

  /** Submits one job, then cancels it, at live replicas in turn, until stopped. */
  static void submitAndCancel(
      Random rnd,
      List<ControllerProcess> live,
      Map<ControllerProcess, TestApi> apis,
      AtomicBoolean stop,
      Set<Long> submitted,
      Set<Long> ended) {
    int turn = rnd.nextInt(3);
    while (!stop.get()) {
      var targets = List.copyOf(live);
      TestApi api = apis.get(targets.get(turn++ % targets.size()));
      var reply =
          Acks.call(
              () ->
                  api.post(
                      "/api/v1/jobs", "{\"name\":\"acct\",\"command\":[\"true\"],\"gpus\":1}"));
      if (reply == null || reply.status() != 201) {
        continue;
      }
      long id = reply.as(SubmitResult.class).id();
      submitted.add(id);
      TestApi other = apis.get(targets.get(turn++ % targets.size()));
      var cancel = Acks.call(() -> other.post("/api/v1/jobs/" + id + "/cancel", "{}"));
      if (cancel != null && cancel.status() == 200) {
        ended.add(id);
      }
    }
  }
}

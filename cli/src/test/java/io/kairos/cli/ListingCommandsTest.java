package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kairos.cli.FakeKairos.Reply;
import java.io.IOException;
import org.junit.jupiter.api.Test;

/**
 * The commands that show and change state: queue, history, nodes (drain, resume), show, cancel,
 * token create, whoami. Requests (paths, queries, bodies) and the tables printed.
 */
class ListingCommandsTest extends ClientTestSupport {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static final String QUEUE =
      "["
          + job(
              7,
              "RUNNING",
              """
          ,"gpus":16,"tasks":2,"startTime":"2026-03-28T11:58:00Z",
           "placement":[{"task":0,"node":"n1","gpus":[0,1]},{"task":1,"node":"n2","gpus":[0,1]}]""")
          + ","
          + job(
                  8,
                  "PENDING",
                  """
          ,"pendingReason":"INSUFFICIENT_GPUS","pendingDetail":"needs 8 GPUs on one node\"""")
              .replace("2026-03-28T11:55:00Z", "2026-03-25T09:00:00Z")
          + "]";

  @Test
  void queueShowsPendingAndRunningAsATable() {
    server.on("GET", "/api/v1/jobs", 200, QUEUE);
    var r = kairos("queue").assertOk();
    assertThat(server.only("GET", "/api/v1/jobs").query()).isEqualTo("state=PENDING,RUNNING");
    assertThat(r.out().lines())
        .containsExactly(
            "ID  NAME     USER   QUEUE    STATE    GPUS  NODES  AGE  REASON",
            "7   train-7  alice  default  RUNNING  16    n1,n2  5m",
            "8   train-8  alice  default  PENDING  8     1      3d   INSUFFICIENT_GPUS");
  }

  @Test
  void queueShowsAnArrayElementWithItsArrayIdAndIndex() {
    server.on(
        "GET",
        "/api/v1/jobs",
        200,
        """
        [{"id":12,"name":"sweep","user":"bob","queue":"default","priority":0,"state":"PENDING",
          "command":["./t.sh"],"env":{},"gpus":1,"tasks":1,"cpus":0,"memoryMb":0,
          "timeLimitSec":60,"submitTime":"%s","attempt":0,"requeues":0,
          "pendingReason":"ARRAY_LIMIT","arrayJobId":10,"arrayTaskId":2}]"""
            .formatted(NOW.minusSeconds(60)));
    var r = kairos("queue").assertOk();
    assertThat(r.out().lines())
        .containsExactly(
            "ID         NAME   USER  QUEUE    STATE    GPUS  NODES  AGE  REASON",
            "12 (10_2)  sweep  bob   default  PENDING  1     1      1m   ARRAY_LIMIT");
  }

  @Test
  void queueFilters() {
    server.on("GET", "/api/v1/jobs", 200, "[]");
    kairos("queue", "--all", "--user", "alice", "--queue", "re search").assertOk();
    kairos("queue", "--state", "pending,failed").assertOk();
    assertThat(server.requests())
        .extracting(FakeKairos.Request::query)
        .containsExactly("user=alice&queue=re%20search", "state=PENDING,FAILED");
  }

  @Test
  void queueWithAnUnknownStateListsTheValidOnes() {
    kairos("queue", "--state", "DONE")
        .assertError(
            2, "--state: unknown state 'DONE'; use PENDING, RUNNING, SUCCEEDED, FAILED, CANCELLED");
  }

  @Test
  void queueJsonIsTheServersArray() throws IOException {
    server.on("GET", "/api/v1/jobs", 200, QUEUE);
    var r = kairos("queue", "--output", "json").assertOk();
    assertThat(JSON.readTree(r.out())).isEqualTo(JSON.readTree(QUEUE));
    assertThat(r.out()).contains("\n  "); // pretty-printed
  }

  @Test
  void queueWithManyNodesShowsThreeAndACount() {
    server.on(
        "GET",
        "/api/v1/jobs",
        200,
        "["
            + job(
                9,
                "RUNNING",
                """
        ,"placement":[{"task":0,"node":"a","gpus":[]},{"task":1,"node":"b","gpus":[]},
          {"task":2,"node":"c","gpus":[]},{"task":3,"node":"d","gpus":[]},{"task":4,"node":"e","gpus":[]}]""")
            + "]");
    assertThat(kairos("queue").assertOk().out()).contains("a,b,c,+2");
  }

  /** A record as /api/v1/history sends it. */
  static String record(long id, String state, String extra) {
    return """
        {"id":%d,"name":"train-%d","user":"alice","account":"ml","queue":"default","state":"%s",
         "submitTime":"2026-03-28T08:00:00Z","elapsedSec":0,"attempts":1,"requeues":0,
         "preemptions":0,"gpus":8,"tasks":1,"cpus":4,"memoryMb":0,"timeLimitSec":3600,
         "nodes":["n1"],"gpuSeconds":7200.0,"gpuSecondsByModel":{"H100":7200.0},
         "cpuSeconds":3600.0,"memoryMbSeconds":0.0,"attemptList":[]%s}"""
        .formatted(id, id, state, extra);
  }

  @Test
  void historyReadsTheAccountingStoreMostRecentLast() {
    server.on(
        "GET",
        "/api/v1/history",
        200,
        "["
            + record(5, "CANCELLED", ",\"endTime\":\"2026-03-28T09:00:00Z\"")
            + ","
            + record(
                3,
                "SUCCEEDED",
                """
            ,"startTime":"2026-03-28T10:00:00Z","endTime":"2026-03-28T11:30:05Z","exitCode":0""")
            + "]");
    var r =
        kairos("history", "--limit", "2", "--user", "alice", "--state", "succeeded,cancelled")
            .assertOk();
    assertThat(server.only("GET", "/api/v1/history").query())
        .isEqualTo("user=alice&state=SUCCEEDED,CANCELLED&limit=2");
    assertThat(r.out().lines())
        .containsExactly(
            "ID  NAME     USER   STATE      GPUS  START     END       ELAPSED  EXIT",
            "5   train-5  alice  CANCELLED  8     -         09:00:00  -        -",
            "3   train-3  alice  SUCCEEDED  8     10:00:00  11:30:05  1:30:05  0");
  }

  @Test
  void historyElapsedPastADayAndOtherDaysDates() {
    server.on(
        "GET",
        "/api/v1/history",
        200,
        "["
            + record(
                4,
                "FAILED",
                """
        ,"startTime":"2026-03-26T10:00:00Z","endTime":"2026-03-27T11:00:00Z","exitCode":3""")
            + "]");
    assertThat(kairos("history").assertOk().out().lines().toList().get(1))
        .isEqualTo("4   train-4  alice  FAILED  8     03-26 10:00  03-27 11:00  1-01:00:00  3");
  }

  @Test
  void historyPrintsTheColumnsAskedForAsCsv() {
    server.on(
        "GET",
        "/api/v1/history",
        200,
        "["
            + record(
                4, "FAILED", ",\"endTime\":\"2026-03-27T11:00:00Z\",\"message\":\"exit 3, on n1\"")
            + "]");
    var r =
        kairos(
                "history",
                "-o",
                "csv",
                "--format",
                "id,account,state,gpu-hours,gpu-hours-by-model,message",
                "--since",
                "7d",
                "--account",
                "ml")
            .assertOk();
    assertThat(server.only("GET", "/api/v1/history").query())
        .isEqualTo("account=ml&since=7d&limit=50");
    assertThat(r.out().lines())
        .containsExactly(
            "ID,ACCOUNT,STATE,GPU_HOURS,GPU_HOURS_BY_MODEL,MESSAGE",
            "4,ml,FAILED,2.00,H100=2.00,\"exit 3, on n1\"");
  }

  @Test
  void sacctAlsoListsEndedJobsTheStateForgotFromTheStore() {
    server.on("GET", "/api/v1/jobs", 200, "[" + job(9, "RUNNING", "") + "]");
    server.on(
        "GET",
        "/api/v1/history",
        200,
        "["
            + record(
                4,
                "FAILED",
                ",\"startTime\":\"2026-03-27T10:00:00Z\",\"endTime\":\"2026-03-27T11:00:00Z\",\"exitCode\":3")
            + "]");
    var r =
        kairos("sacct", "-a", "-S", "2026-03-27", "-P", "-o", "JobID,State,ExitCode,NodeList")
            .assertOk();
    assertThat(server.only("GET", "/api/v1/history").query())
        .startsWith("since=")
        .endsWith("&limit=100000");
    assertThat(r.out().lines())
        .containsExactly(
            "JobID|State|ExitCode|NodeList", "9|RUNNING|0:0|None assigned", "4|FAILED|3:0|n1");
  }

  @Test
  void historyRefusesAnUnknownColumnNamingTheValidOnes() {
    kairos("history", "--format", "id,colour")
        .assertError(2, "unknown column 'colour'; use id, name");
  }

  @Test
  void reportShowsUsagePerAccountWithATotal() {
    server.on(
        "GET",
        "/api/v1/report",
        200,
        """
        {"by":"account","from":"2026-03-27T12:00:00Z","to":"2026-03-28T12:00:00Z",
         "rows":[{"key":"ml","jobs":3,"gpuSeconds":36000.0,"gpuSecondsByModel":{"H100":36000.0},
                  "cpuSeconds":7200.0,"memoryMbSeconds":0.0},
                 {"key":"","jobs":1,"gpuSeconds":0.0,"gpuSecondsByModel":{},
                  "cpuSeconds":3600.0,"memoryMbSeconds":0.0}],
         "total":{"key":"total","jobs":4,"gpuSeconds":36000.0,"gpuSecondsByModel":{"H100":36000.0},
                  "cpuSeconds":10800.0,"memoryMbSeconds":0.0}}""");
    var r = kairos("report", "--by", "Account", "--since", "1d").assertOk();
    assertThat(server.only("GET", "/api/v1/report").query()).isEqualTo("by=account&since=1d");
    assertThat(r.out().lines())
        .containsExactly(
            "Usage from 2026-03-27T12:00:00Z to 2026-03-28T12:00:00Z by account",
            "ACCOUNT  JOBS  GPU_HOURS  GPU_HOURS_BY_MODEL  CPU_HOURS",
            "ml       3     10.00      H100=10.00          2.00",
            "(none)   1     0.00                           1.00",
            "TOTAL    4     10.00      H100=10.00          3.00");
    var csv = kairos("report", "-o", "csv").assertOk();
    assertThat(csv.out().lines().toList().getFirst())
        .isEqualTo("ACCOUNT,JOBS,GPU_HOURS,GPU_HOURS_BY_MODEL,CPU_HOURS");
    kairos("report", "--by", "planet").assertError(2, "--by must be account, user or queue");
  }

  @Test
  void nodesShowsGpusUsedOfTotalAndJobs() {
    server.on(
        "GET",
        "/api/v1/nodes",
        200,
        """
        [{"name":"n1","state":"UP","gpuModel":"H100","gpus":8,"gpusUsed":3,"cpus":64,
          "memoryBytes":0,"epoch":1,"jobs":[7,8],"liveness":"SUSPECT","phi":4.23},
         {"name":"n2","state":"DRAINED","reason":"bad fan","gpuModel":"H100","gpus":8,
          "gpusUsed":0,"cpus":64,"memoryBytes":0,"epoch":1,"jobs":[]}]""");
    var r = kairos("nodes").assertOk();
    assertThat(r.out().lines())
        .containsExactly(
            "NODE  STATE    GPUS  MODEL  JOBS  LIVENESS         REASON",
            "n1    UP       3/8   H100   7,8   SUSPECT phi=4.2",
            "n2    DRAINED  0/8   H100   -     -                bad fan");
  }

  @Test
  void nodesShowWhoseJobsANonRootAgentRuns() {
    server.on(
        "GET",
        "/api/v1/nodes",
        200,
        """
        [{"name":"n1","state":"UP","gpuModel":"H100","gpus":8,"gpusUsed":0,"cpus":64,
          "memoryBytes":0,"epoch":1,"jobs":[],"liveness":"ALIVE"},
         {"name":"n2","state":"UP","gpuModel":"H100","gpus":8,"gpusUsed":0,"cpus":64,
          "memoryBytes":0,"epoch":1,"jobs":[],"liveness":"ALIVE","runsOnlyAs":"alice"}]""");
    var r = kairos("nodes").assertOk();
    assertThat(r.out().lines())
        .containsExactly(
            "NODE  STATE  GPUS  MODEL  JOBS  LIVENESS  RUNS JOBS OF  REASON",
            "n1    UP     0/8   H100   -     ALIVE     any user",
            "n2    UP     0/8   H100   -     ALIVE     alice only");
  }

  @Test
  void nodesShowsGpusOutOfServiceAndResumeReturnsOne() {
    server.on(
        "GET",
        "/api/v1/nodes",
        200,
        """
        [{"name":"n1","state":"UP","gpuModel":"H100","gpus":8,"gpusUsed":2,"cpus":64,
          "memoryBytes":0,"epoch":1,"jobs":[7],"liveness":"ALIVE",
          "gpusOutOfService":{"2":"GPU 2: XID 48","5":"thermal"}},
         {"name":"n2","state":"DRAINED","reason":"bad fan","gpuModel":"H100","gpus":8,
          "gpusUsed":0,"cpus":64,"memoryBytes":0,"epoch":1,"jobs":[],"liveness":"ALIVE",
          "gpusOutOfService":{"0":"ECC"}}]""");
    server.on("POST", "/api/v1/nodes/n1/gpus/2/resume", 200, "{\"name\":\"n1\",\"state\":\"UP\"}");
    assertThat(kairos("nodes").assertOk().out().lines())
        .containsExactly(
            "NODE  STATE    GPUS         MODEL  JOBS  LIVENESS  REASON",
            "n1    UP       2/8 (2 out)  H100   7     ALIVE     GPU 2 out of service: GPU 2: XID 48;"
                + " GPU 5 out of service: thermal",
            "n2    DRAINED  0/8 (1 out)  H100   -     ALIVE     bad fan; GPU 0 out of service: ECC");
    assertThat(kairos("nodes", "resume", "n1", "--gpu", "2").assertOk().out())
        .isEqualTo("GPU 2 of node n1 is back in service\n");
    assertThat(server.only("POST", "/api/v1/nodes/n1/gpus/2/resume").body()).isEmpty();
  }

  @Test
  void usersListsTheTableAndSetPutsTheAccount() throws IOException {
    server.on(
        "GET",
        "/api/v1/users",
        200,
        """
        [{"name":"admin","unixUser":"root","mapped":false},
         {"name":"alice","unixUser":"asmith","mapped":true}]""");
    server.on(
        "PUT",
        "/api/v1/users/bob",
        200,
        "{\"name\":\"bob\",\"unixUser\":\"bsmith\",\"mapped\":true}");
    assertThat(kairos("users").assertOk().out().lines())
        .containsExactly(
            "USER   UNIX ACCOUNT  SET BY",
            "admin  root          default",
            "alice  asmith        admin");
    assertThat(kairos("users", "set", "bob", "--unix-user", "bsmith").assertOk().out())
        .isEqualTo("bob's jobs now run as the Unix account bsmith\n");
    assertThat(JSON.readTree(server.only("PUT", "/api/v1/users/bob").body()))
        .isEqualTo(JSON.readTree("{\"unixUser\":\"bsmith\"}"));
  }

  @Test
  void showSaysWhoAJobRunsAs() {
    server.on("GET", "/api/v1/jobs/7", 200, job(7, "PENDING", ",\"runAs\":\"asmith\""));
    assertThat(kairos("show", "7").assertOk().out().lines())
        .contains("runs as:     asmith (Unix account)");
  }

  @Test
  void drainSendsTheReason() throws IOException {
    server.on(
        "POST",
        "/api/v1/nodes/n1/drain",
        200,
        "{\"name\":\"n1\",\"state\":\"DRAINED\",\"gpus\":8,\"jobs\":[7]}");
    var r = kairos("nodes", "drain", "n1", "--reason", "bad fan").assertOk();
    assertThat(r.out()).isEqualTo("Drained node n1 (1 jobs still running there)\n");
    var request = server.only("POST", "/api/v1/nodes/n1/drain");
    assertThat(JSON.readTree(request.body())).isEqualTo(JSON.readTree("{\"reason\":\"bad fan\"}"));
    assertThat(request.header("Authorization")).isEqualTo("Bearer " + TOKEN);
  }

  @Test
  void drainWithoutReasonSendsNoBodyAndResumeWorks() {
    server.on("POST", "/api/v1/nodes/n1/drain", 200, "{\"name\":\"n1\",\"state\":\"DRAINED\"}");
    server.on("POST", "/api/v1/nodes/n1/resume", 200, "{\"name\":\"n1\",\"state\":\"UP\"}");
    assertThat(kairos("nodes", "drain", "n1").assertOk().out()).isEqualTo("Drained node n1\n");
    assertThat(server.only("POST", "/api/v1/nodes/n1/drain").body()).isEmpty();
    assertThat(kairos("nodes", "resume", "n1").assertOk().out()).isEqualTo("Resumed node n1\n");
  }

  @Test
  void showListsKeysAndPlacement() {
    server.on(
        "GET",
        "/api/v1/jobs/7",
        200,
        job(
            7,
            "RUNNING",
            """
        ,"gpus":16,"gpusPerNode":8,"tasks":2,"memoryMb":4096,"env":{"A":"1"},
         "command":["python","train.py","--msg","hello world"],
         "startTime":"2026-03-28T11:58:00Z",
         "placement":[{"task":0,"node":"n1","gpus":[0,1,2,3,4,5,6,7]},{"task":1,"node":"n2","gpus":[0,1,2,3,4,5,6,7]}]"""));
    var r = kairos("show", "7").assertOk();
    assertThat(r.out().lines())
        .containsExactly(
            "id:          7",
            "name:        train-7",
            "user:        alice",
            "queue:       default",
            "priority:    0",
            "state:       RUNNING",
            "command:     python train.py --msg 'hello world'",
            "workdir:     /home/alice",
            "env:         A=1",
            "gpus:        16 (8 per node)",
            "tasks:       2",
            "cpus:        4 per task",
            "memory:      4096 MiB per task",
            "time limit:  1:00:00",
            "gpu model:   any",
            "submitted:   2026-03-28 11:55:00 (5m ago)",
            "started:     2026-03-28 11:58:00",
            "elapsed:     0:02:00",
            "placement:",
            "  task 0  n1  GPUs 0,1,2,3,4,5,6,7",
            "  task 1  n2  GPUs 0,1,2,3,4,5,6,7");
  }

  @Test
  void showPendingGivesTheReason() {
    server.on(
        "GET",
        "/api/v1/jobs/8",
        200,
        job(
            8,
            "PENDING",
            ",\"pendingReason\":\"INSUFFICIENT_GPUS\",\"pendingDetail\":\"needs 8 GPUs on one node\""));
    assertThat(kairos("show", "8").assertOk().out())
        .contains("reason:      INSUFFICIENT_GPUS: needs 8 GPUs on one node\n");
  }

  @Test
  void cancelReportsEachIdAndGoesOnAfterAnError() {
    server.on("POST", "/api/v1/jobs/1/cancel", 200, job(1, "CANCELLED", ""));
    server.on(
        "POST",
        "/api/v1/jobs/2/cancel",
        r ->
            Reply.problem(
                404,
                "{\"title\":\"Not found\",\"status\":404,\"detail\":\"no job 2\",\"fix\":\"see kairos queue --all\"}"));
    server.on("POST", "/api/v1/jobs/3/cancel", 200, job(3, "SUCCEEDED", ""));
    var r = kairos("cancel", "1", "2", "3");
    assertThat(r.code()).isEqualTo(1);
    assertThat(r.out()).isEqualTo("Cancelled job 1\nJob 3 had already ended: SUCCEEDED\n");
    assertThat(r.err()).isEqualTo("kairos: job 2: no job 2 (fix: see kairos queue --all)\n");
    assertThat(server.requests()).hasSize(3);
  }

  @Test
  void cancelJsonIsAnArrayOfTheReplies() throws IOException {
    server.on("POST", "/api/v1/jobs/1/cancel", 200, job(1, "CANCELLED", ""));
    var r = kairos("cancel", "-o", "json", "1").assertOk();
    assertThat(JSON.readTree(r.out()))
        .isEqualTo(JSON.readTree("[" + job(1, "CANCELLED", "") + "]"));
  }

  @Test
  void cancelStopsAtOnceWhenNoControllerAnswers() {
    String url = "http://127.0.0.1:" + deadPort();
    kairos("cancel", "--server", url, "1", "2").assertError(1, "no controller at " + url);
  }

  @Test
  void tokenCreatePrintsTheTokenAndAHint() throws IOException {
    server.on(
        "POST", "/api/v1/tokens", 201, "{\"token\":\"kt_abc\",\"user\":\"bob\",\"admin\":true}");
    var r = kairos("token", "create", "--user", "bob", "--admin");
    assertThat(r.code()).isZero();
    assertThat(r.out()).isEqualTo("kt_abc\n");
    assertThat(r.err()).contains("export KAIROS_TOKEN=kt_abc");
    assertThat(JSON.readTree(server.only("POST", "/api/v1/tokens").body()))
        .isEqualTo(JSON.readTree("{\"user\":\"bob\",\"admin\":true}"));
  }

  @Test
  void tokenWithoutSubcommandIsAUsageError() {
    var r = kairos("token");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).contains("kairos token create --user NAME");
  }

  @Test
  void whoamiNamesUserAndServer() {
    server.on("GET", "/api/v1/whoami", 200, "{\"user\":\"alice\",\"admin\":true}");
    assertThat(kairos("whoami").assertOk().out())
        .isEqualTo("alice (admin) at " + server.url() + "\n");
  }
}

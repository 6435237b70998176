package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import org.junit.jupiter.api.Test;

/**
 * What the CLI shows of the safeguards: another user's job with its private data withheld, the
 * limits (show and set), and a submit refused by a limit.
 */
class SafeguardCommandsTest extends ClientTestSupport {
  static final ObjectMapper JSON = new ObjectMapper();

  static final String LIMITS =
      """
      {"maxJobsPerUser":3640,"maxLiveJobs":14563,"maxEndedJobs":7281,"maxJobBytes":65536,
       "submitsPerSec":1000.0,"submitBurst":10000,
       "perUser":{"alice":{"maxJobs":100,"submitsPerSec":0.5}},
       "set":true,"liveJobs":12,"endedJobs":40,"heapMaxBytes":268435456,
       "defaults":{"maxJobsPerUser":3640,"maxLiveJobs":14563,"maxEndedJobs":7281,
         "maxJobBytes":65536,"submitsPerSec":1000.0,"submitBurst":10000,"perUser":{}}}""";

  @Test
  void showOfAnotherUsersJobSaysWhatIsPrivate() {
    server.on(
        "GET",
        "/api/v1/jobs/9",
        200,
        """
        {"id":9,"name":"train","user":"bob","queue":"default","priority":0,"state":"RUNNING",
         "gpus":1,"tasks":1,"cpus":0,"memoryMb":0,"timeLimitSec":3600,
         "submitTime":"2026-03-28T11:55:00Z","attempt":1,"requeues":0,
         "redacted":["command","env","workdir","checkpointDir"]}""");
    var out = kairos("show", "9").assertOk().out();
    assertThat(out.lines())
        .contains(
            "user:         bob",
            "command:      (private)",
            "workdir:      (private)",
            "env:          (private)",
            "checkpoints:  (private)");
  }

  @Test
  void limitsShowsEachLimitWithItsUseAndDefaultAndTheOverrides() {
    server.on("GET", "/api/v1/limits", 200, LIMITS);
    var out = kairos("limits").assertOk().out();
    assertThat(out.lines())
        .contains(
            "LIMIT           VALUE   IN USE  HEAP DEFAULT",
            "maxJobsPerUser  3,640   -       3,640",
            "maxLiveJobs     14,563  12      14,563",
            "maxEndedJobs    7,281   40      7,281",
            "submitsPerSec   1,000   -       1,000",
            "USER   MAX JOBS  SUBMITS/S  BURST",
            "alice  100       0.50       -");
    assertThat(out).contains("256 MiB");
    assertThat(kairos("limits", "show").assertOk().out()).isEqualTo(out);
  }

  @Test
  void limitsSetSendsWhatWasGivenAndMergesTheUsersOverrides() throws IOException {
    server.on("GET", "/api/v1/limits", 200, LIMITS);
    server.on("PUT", "/api/v1/limits", 200, LIMITS);
    kairos("limits", "set", "--max-live-jobs", "20000").assertOk();
    assertThat(JSON.readTree(server.only("PUT", "/api/v1/limits").body()))
        .isEqualTo(JSON.readTree("{\"maxLiveJobs\":20000}"));
  }

  @Test
  void limitsSetForAUserKeepsItsOtherOverrides() throws IOException {
    server.on("GET", "/api/v1/limits", 200, LIMITS);
    server.on("PUT", "/api/v1/limits", 200, LIMITS);
    kairos("limits", "set", "--user", "alice", "--submit-burst", "20").assertOk();
    assertThat(JSON.readTree(server.only("PUT", "/api/v1/limits").body()))
        .isEqualTo(
            JSON.readTree(
                "{\"perUser\":{\"alice\":{\"maxJobs\":100,\"submitsPerSec\":0.5,\"submitBurst\":20}}}"));
  }

  @Test
  void limitsSetClearUserSendsNull() throws IOException {
    server.on("PUT", "/api/v1/limits", 200, LIMITS);
    kairos("limits", "set", "--clear-user", "alice").assertOk();
    assertThat(JSON.readTree(server.only("PUT", "/api/v1/limits").body()))
        .isEqualTo(JSON.readTree("{\"perUser\":{\"alice\":null}}"));
  }

  @Test
  void maxJobsWithoutAUserIsAUsageError() {
    kairos("limits", "set", "--max-jobs", "5").assertError(2, "--user");
  }

  @Test
  void aSubmitRefusedByALimitSaysWhichAndExits1() {
    server.on(
        "POST",
        "/api/v1/jobs",
        r ->
            FakeKairos.Reply.problem(
                429,
                """
                {"type":"/docs/api#limit-reached","title":"Limit reached","status":429,
                 "detail":"alice has 3,640 jobs pending or running and this submit adds 1: over the limit of 3,640 per user (maxJobsPerUser)",
                 "fix":"wait for some of these jobs to end","limit":"maxJobsPerUser","limitValue":3640}"""));
    kairos("submit", "--", "true").assertError(1, "maxJobsPerUser", "3,640");
  }
}

package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kairos.cli.FakeKairos.Reply;
import java.io.IOException;
import org.junit.jupiter.api.Test;

/**
 * {@code kairos bench turnover} against the fake controller: it reads its ended jobs with one list
 * of the most recent ended jobs (not one request per job, which the server's CPU per job in
 * scripts/turnover.sh would count), and asks alone only for a job of its own the list left out.
 */
class BenchTurnoverCommandTest extends ClientTestSupport {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static String ended(long id, String node, int gpu, String start, String end) {
    return job(
        id,
        "SUCCEEDED",
        """
        ,"startTime":"%s","endTime":"%s","placement":[{"rank":0,"node":"%s","gpus":[%d]}]"""
            .formatted(start, end, node, gpu));
  }

  @Test
  void readsItsEndedJobsWithOneListAndAsksAloneOnlyForOneItLeftOut() throws IOException {
    server.on("POST", "/api/v1/jobs", 201, "{\"id\":10,\"count\":3}");
    server.on(
        "GET",
        "/api/v1/jobs",
        r ->
            r.query().startsWith("state=PENDING,RUNNING")
                ? Reply.json(200, "[]")
                // Job 10 is not in the list (another user's job 99 ended after it).
                : Reply.json(
                    200,
                    "["
                        + ended(11, "n1", 0, "2026-03-28T11:55:01Z", "2026-03-28T11:55:02Z")
                        + ","
                        + ended(12, "n1", 0, "2026-03-28T11:55:02.5Z", "2026-03-28T11:55:03Z")
                        + ","
                        + ended(99, "n2", 0, "2026-03-28T11:55:01Z", "2026-03-28T11:55:09Z")
                        + "]"));
    server.on(
        "GET",
        "/api/v1/jobs/10",
        200,
        ended(10, "n2", 1, "2026-03-28T11:55:00.5Z", "2026-03-28T11:55:01Z"));

    var r = kairos("bench", "turnover", "--jobs", "3", "-o", "json").assertOk();

    JsonNode report = JSON.readTree(r.out());
    assertThat(report.get("jobs").asInt()).isEqualTo(3);
    assertThat(report.get("failed").asInt()).isZero();
    // Submitted 11:55:00 (the fixture's submit time), the last of ours ended 11:55:03, not job 99.
    assertThat(report.get("seconds").asDouble()).isEqualTo(3.0);
    assertThat(report.get("slots_used").asInt()).isEqualTo(2);
    assertThat(server.requests())
        .filteredOn(q -> q.method().equals("GET") && q.path().startsWith("/api/v1/jobs/"))
        .extracting(FakeKairos.Request::path)
        .containsExactly("/api/v1/jobs/10");
    assertThat(server.requests())
        .filteredOn(
            q ->
                q.path().equals("/api/v1/jobs")
                    && String.valueOf(q.query()).startsWith("state=SUCC"))
        .extracting(FakeKairos.Request::query)
        .containsExactly("state=SUCCEEDED,FAILED,CANCELLED&limit=3");
  }
}

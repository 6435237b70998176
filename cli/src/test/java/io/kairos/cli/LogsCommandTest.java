package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.cli.FakeKairos.Reply;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** {@code kairos logs}: offsets, follow until done and ended, UTF-8 across chunks. */
class LogsCommandTest extends ClientTestSupport {
  private static Reply chunk(String text, long next, boolean done) {
    return new Reply(
        200,
        Map.of(
            "Content-Type",
            "text/plain",
            "Kairos-Log-Offset",
            String.valueOf(next),
            "Kairos-Log-Done",
            String.valueOf(done)),
        text.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void printsFromOffsetZeroUntilNothingIsLeft() {
    server.on(
        "GET",
        "/api/v1/jobs/5/logs",
        r -> r.query().endsWith("offset=0") ? chunk("hello\n", 6, false) : chunk("", 6, false));
    var r = kairos("logs", "5").assertOk();
    assertThat(r.out()).isEqualTo("hello\n");
    assertThat(server.requests())
        .extracting(FakeKairos.Request::query)
        .containsExactly("task=0&stream=stdout&offset=0", "task=0&stream=stdout&offset=6");
  }

  @Test
  void taskAndStderrAreAsked() {
    server.on("GET", "/api/v1/jobs/5/logs", r -> chunk("", 0, true));
    kairos("logs", "5", "--task", "2", "--stderr").assertOk();
    assertThat(server.requests().getFirst().query()).isEqualTo("task=2&stream=stderr&offset=0");
  }

  @Test
  void followStopsOnceTheLogIsDoneAndTheJobHasEnded() {
    var polls = new AtomicInteger();
    server.on(
        "GET",
        "/api/v1/jobs/5/logs",
        r -> {
          int n = polls.incrementAndGet();
          return switch (r.query().replaceAll(".*offset=", "")) {
            case "0" -> chunk("hello\n", 6, false);
            case "6" -> n < 4 ? chunk("", 6, false) : chunk("world\n", 12, true);
            default -> chunk("", 12, true);
          };
        });
    server.on("GET", "/api/v1/jobs/5", 200, job(5, "SUCCEEDED", ",\"exitCode\":0"));
    var r = kairos("logs", "-f", "5").assertOk();
    assertThat(r.out()).isEqualTo("hello\nworld\n");
    var queries = server.requests().stream().map(q -> q.path() + "?" + q.query()).toList();
    assertThat(queries.getLast()).isEqualTo("/api/v1/jobs/5?null");
    assertThat(queries).contains("/api/v1/jobs/5/logs?task=0&stream=stdout&offset=12");
    // Asked the job only once the log said done.
    assertThat(queries.stream().filter(q -> q.startsWith("/api/v1/jobs/5?"))).hasSize(1);
  }

  @Test
  void followKeepsGoingWhileTheJobRunsEvenIfTheLogSaysDone() {
    var jobPolls = new AtomicInteger();
    server.on("GET", "/api/v1/jobs/5/logs", r -> chunk("", 0, true));
    server.on(
        "GET",
        "/api/v1/jobs/5",
        r ->
            Reply.json(
                200,
                jobPolls.incrementAndGet() < 2 ? job(5, "RUNNING", "") : job(5, "CANCELLED", "")));
    kairos("logs", "--follow", "5").assertOk();
    assertThat(jobPolls.get()).isEqualTo(2);
  }

  @Test
  void followWaitsForAJobThatHasNotStarted() {
    var logPolls = new AtomicInteger();
    server.on(
        "GET",
        "/api/v1/jobs/5/logs",
        r ->
            logPolls.incrementAndGet() == 1
                ? Reply.problem(
                    409,
                    "{\"title\":\"Conflict\",\"status\":409,"
                        + "\"detail\":\"job 5 has not started yet: no logs\"}")
                : chunk(r.query().endsWith("offset=0") ? "hi\n" : "", 3, true));
    var jobPolls = new AtomicInteger();
    server.on(
        "GET",
        "/api/v1/jobs/5",
        r ->
            Reply.json(
                200,
                jobPolls.incrementAndGet() == 1 ? job(5, "PENDING", "") : job(5, "SUCCEEDED", "")));
    assertThat(kairos("logs", "-f", "5").assertOk().out()).isEqualTo("hi\n");
  }

  @Test
  void withoutFollowANotStartedJobIsAnError() {
    server.on(
        "GET",
        "/api/v1/jobs/5/logs",
        r ->
            Reply.problem(
                409,
                "{\"title\":\"Conflict\",\"status\":409,\"detail\":\"job 5 has not started yet: no logs\"}"));
    kairos("logs", "5").assertError(1, "kairos: job 5 has not started yet: no logs");
  }

  @Test
  void aCharacterSplitBetweenChunksIsPrintedWhole() {
    byte[] bytes = "é€ok".getBytes(StandardCharsets.UTF_8);
    var out = new StringWriter();
    var text = new LogsCommand.Utf8Text(new PrintWriter(out));
    text.write(Arrays.copyOfRange(bytes, 0, 1));
    text.write(Arrays.copyOfRange(bytes, 1, 3));
    text.write(Arrays.copyOfRange(bytes, 3, bytes.length));
    text.finish();
    assertThat(out.toString()).isEqualTo("é€ok");
  }

  @Test
  void anUnknownJobIsOneLine() {
    server.on(
        "GET",
        "/api/v1/jobs/9/logs",
        r ->
            Reply.problem(404, "{\"title\":\"Not found\",\"status\":404,\"detail\":\"no job 9\"}"));
    kairos("logs", "9").assertError(1, "kairos: no job 9");
  }
}

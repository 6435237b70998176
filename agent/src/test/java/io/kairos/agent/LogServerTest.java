package io.kairos.agent;

import static io.kairos.agent.Assignments.script;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kairos.protocol.agent.ExitReason;
import io.kairos.protocol.agent.TaskStatus;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The log server over real HTTP, reading the output of real tasks. */
class LogServerTest {
  private static final String TOKEN = "join-secret";

  @TempDir Path dataDir;

  private TaskTable table;
  private LogServer server;
  private HttpClient client;

  @BeforeEach
  void start() throws IOException {
    table =
        new TaskTable(
            "n1",
            dataDir,
            Duration.ofSeconds(5),
            0,
            Map.of("PATH", System.getenv("PATH")),
            new ProcessLauncher(),
            new ManualClock(),
            () -> {},
            TaskHooks.NONE);
    server = new LogServer("127.0.0.1", 0, TOKEN, dataDir, table);
    client = HttpClient.newHttpClient();
    // Job 1 has exited; job 2 is still running.
    table.launch(script(1, "printf 'hello world\\n'; printf 'oops' >&2"));
    table.launch(script(2, "printf 'started\\n'; exec sleep 60"));
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> table.report(new TaskKey(1, 1, 0)).orElseThrow().status() == TaskStatus.EXITED);
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> get("/logs/2/1/0").body().equals("started\n"));
  }

  @AfterEach
  void stop() {
    table.killAll(ExitReason.KILLED, "test over");
    server.close();
    client.close();
  }

  @Test
  void servesAWholeFinishedLog() throws Exception {
    var response = get("/logs/1/1/0");

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.body()).isEqualTo("hello world\n");
    assertThat(response.headers().firstValue("Content-Type"))
        .hasValueSatisfying(v -> assertThat(v).startsWith("text/plain"));
    assertThat(response.headers().firstValue(LogServer.OFFSET_HEADER)).hasValue("12");
    assertThat(response.headers().firstValue(LogServer.DONE_HEADER)).hasValue("true");
  }

  @Test
  void servesAPieceFromAnOffset() throws Exception {
    var response = get("/logs/1/1/0?offset=6&limit=3");

    assertThat(response.body()).isEqualTo("wor");
    assertThat(response.headers().firstValue(LogServer.OFFSET_HEADER)).hasValue("9");
    assertThat(response.headers().firstValue(LogServer.DONE_HEADER)).hasValue("false");
  }

  @Test
  void theEndOfAFinishedLogIsDone() throws Exception {
    var response = get("/logs/1/1/0?offset=12");

    assertThat(response.body()).isEmpty();
    assertThat(response.headers().firstValue(LogServer.OFFSET_HEADER)).hasValue("12");
    assertThat(response.headers().firstValue(LogServer.DONE_HEADER)).hasValue("true");
  }

  @Test
  void theEndOfARunningTaskLogIsNotDone() throws Exception {
    var response = get("/logs/2/1/0?offset=8");

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.body()).isEmpty();
    assertThat(response.headers().firstValue(LogServer.DONE_HEADER)).hasValue("false");
  }

  @Test
  void servesTheFilesAJobSentItsOutputTo() throws Exception {
    Path logs = dataDir.resolve("shared/logs");
    var a =
        Assignments.withOutput(
            script(3, "printf 'out\\n'; printf 'err' >&2"), logs + "/%x-%j.out", logs + "/%j.err");
    java.nio.file.Files.createDirectories(logs);
    java.nio.file.Files.writeString(logs.resolve("3.err"), "earlier;");
    table.launch(a);
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> table.report(new TaskKey(3, 1, 0)).orElseThrow().status() == TaskStatus.EXITED);

    assertThat(java.nio.file.Files.readString(logs.resolve("job3-3.out"))).isEqualTo("out\n");
    assertThat(get("/logs/3/1/0").body()).isEqualTo("out\n");
    // Appended to, as Slurm does: what was there stays.
    assertThat(get("/logs/3/1/0?stream=stderr").body()).isEqualTo("earlier;err");
  }

  @Test
  void withOnlyAnOutputFileStderrGoesThereToo() throws Exception {
    Path out = dataDir.resolve("new/dir/both.log");
    table.launch(
        Assignments.withOutput(script(4, "printf 'a'; printf 'b' >&2"), out.toString(), null));
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> table.report(new TaskKey(4, 1, 0)).orElseThrow().status() == TaskStatus.EXITED);

    assertThat(java.nio.file.Files.readString(out)).hasSize(2).contains("a", "b");
    assertThat(get("/logs/4/1/0?stream=stderr").body()).isEqualTo(get("/logs/4/1/0").body());
  }

  @Test
  void servesStderr() throws Exception {
    assertThat(get("/logs/1/1/0?stream=stderr").body()).isEqualTo("oops");
  }

  @Test
  void anUnknownTaskIsNotFound() throws Exception {
    assertThat(get("/logs/9/1/0").statusCode()).isEqualTo(404);
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(
      strings = {
        "/logs/1/1/0?offset=13",
        "/logs/1/1/0?offset=-1",
        "/logs/1/1/0?offset=abc",
        "/logs/1/1/0?limit=0",
        "/logs/1/1/0?stream=stdin",
        "/logs/x/1/0",
        "/logs/0/1/0",
        "/logs/1/1"
      })
  void aBadRequestIs400(String path) throws Exception {
    assertThat(get(path).statusCode()).isEqualTo(400);
  }

  @Test
  void aRequestWithoutTheTokenIsUnauthorized() throws Exception {
    var noToken = request("/logs/1/1/0").build();
    var wrongToken = request("/logs/1/1/0").header("Authorization", "Bearer wrong").build();

    assertThat(client.send(noToken, HttpResponse.BodyHandlers.ofString()).statusCode())
        .isEqualTo(401);
    assertThat(client.send(wrongToken, HttpResponse.BodyHandlers.ofString()).statusCode())
        .isEqualTo(401);
  }

  @Test
  void healthNeedsNoToken() throws Exception {
    var response = client.send(request("/healthz").build(), HttpResponse.BodyHandlers.ofString());

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.body()).isEqualTo("ok");
  }

  private HttpResponse<String> get(String path) throws IOException, InterruptedException {
    return client.send(
        request(path).header("Authorization", "Bearer " + TOKEN).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private HttpRequest.Builder request(String path) {
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path)).GET();
  }
}

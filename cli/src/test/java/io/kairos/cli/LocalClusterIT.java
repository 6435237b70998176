package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.kairos.protocol.JobState;
import io.kairos.protocol.JobView;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * End to end: {@code kairos up} as a real process (controller and local agent with 4 emulated
 * GPUs), driven by the real CLI commands. Jobs are real processes that write files.
 */
class LocalClusterIT {
  private static final ObjectMapper JSON = JsonMapper.builder().build();
  @TempDir static Path dir;
  static Process up;
  static String url;
  static String token;
  static Path out;

  @BeforeAll
  static void startUp() throws Exception {
    int port;
    try (var s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    out = dir.resolve("up.log");
    var cmd = new ArrayList<String>();
    cmd.add(ProcessHandle.current().info().command().orElse("java"));
    cmd.addAll(
        List.of(
            "--sun-misc-unsafe-memory-access=allow",
            "--enable-native-access=ALL-UNNAMED",
            "-Xmx512m",
            "-XX:+UseSerialGC",
            "-cp",
            System.getProperty("java.class.path"),
            "io.kairos.cli.Main",
            "up",
            "--data",
            dir.resolve("data").toString(),
            "--listen",
            "127.0.0.1:" + port,
            "--gpus",
            "4"));
    up = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
    url = "http://127.0.0.1:" + port;
    waitFor(
        "kairos up prints its banner",
        Duration.ofSeconds(60),
        () -> log().contains("Kairos is up"));
    token = Files.readString(dir.resolve("data/admin.token")).strip();
    waitFor(
        "the local node registers",
        Duration.ofSeconds(20),
        () -> get("/api/v1/nodes").contains("\"local\""));
  }

  @AfterAll
  static void stop() throws Exception {
    if (up != null) {
      up.destroy();
      if (!up.waitFor(20, TimeUnit.SECONDS)) {
        up.destroyForcibly();
      }
    }
  }

  static String log() {
    try {
      return Files.readString(out);
    } catch (IOException e) {
      return "";
    }
  }

  static void waitFor(String what, Duration limit, BooleanSupplier condition)
      throws InterruptedException {
    long deadline = System.nanoTime() + limit.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "timed out waiting until " + what + "; kairos up printed:\n" + log());
      }
      Thread.sleep(50);
    }
  }

  static String get(String path) {
    try {
      var r =
          HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(URI.create(url + path))
                      .header("Authorization", "Bearer " + token)
                      .build(),
                  HttpResponse.BodyHandlers.ofString());
      return r.body();
    } catch (IOException e) {
      return "";
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
  }

  static JobView job(long id) {
    try {
      return JSON.readValue(get("/api/v1/jobs/" + id), JobView.class);
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  record Run(int code, String out, String err) {}

  static Run kairos(String... args) {
    var o = new StringWriter();
    var e = new StringWriter();
    var all = new ArrayList<String>();
    all.add(args[0]);
    all.addAll(List.of("--server", url, "--token", token));
    all.addAll(List.of(args).subList(1, args.length));
    int code =
        Main.run(new PrintWriter(o, true), new PrintWriter(e, true), all.toArray(String[]::new));
    return new Run(code, o.toString(), e.toString());
  }

  static long submitted(Run run) {
    assertThat(run.code()).as(run.err()).isZero();
    var m = java.util.regex.Pattern.compile("(\\d+)").matcher(run.out());
    assertThat(m.find()).as(run.out()).isTrue();
    return Long.parseLong(m.group(1));
  }

  static void waitState(long id, JobState state) throws InterruptedException {
    waitFor(
        "job " + id + " is " + state + " (it is " + job(id).state() + ")",
        Duration.ofSeconds(30),
        () -> job(id).state() == state);
  }

  @Test
  void jobsRunAsProcessesWithTheirOwnGpusAndShowInHistory() throws Exception {
    Path a = dir.resolve("a.txt");
    Path b = dir.resolve("b.txt");
    String script = "echo $CUDA_VISIBLE_DEVICES > %s; echo rank=$RANK world=$WORLD_SIZE; sleep 1";
    long first =
        submitted(kairos("submit", "--gpus", "2", "--", "/bin/sh", "-c", script.formatted(a)));
    long second =
        submitted(kairos("submit", "--gpus", "2", "--", "/bin/sh", "-c", script.formatted(b)));

    waitState(first, JobState.SUCCEEDED);
    waitState(second, JobState.SUCCEEDED);

    var gpusA = List.of(Files.readString(a).strip().split(","));
    var gpusB = List.of(Files.readString(b).strip().split(","));
    assertThat(gpusA).hasSize(2);
    assertThat(gpusB).hasSize(2);
    assertThat(job(first).placement().get(0).gpus())
        .extracting(String::valueOf)
        .containsExactlyInAnyOrderElementsOf(gpusA);
    var all = new HashSet<String>(gpusA);
    all.addAll(gpusB);
    assertThat(all)
        .as("two 2-GPU jobs overlapped in time on 4 GPUs: disjoint GPUs")
        .hasSize(4)
        .allSatisfy(g -> assertThat(Integer.parseInt(g)).isBetween(0, 3));

    var logs = kairos("logs", Long.toString(first));
    assertThat(logs.code()).as(logs.err()).isZero();
    assertThat(logs.out()).contains("rank=0 world=1");
    var history = kairos("history");
    assertThat(history.out()).contains(Long.toString(first)).contains("SUCCEEDED");
  }

  @Test
  void exitCodesTimeLimitsAndCancelAreReported() throws Exception {
    long failing = submitted(kairos("submit", "--", "/bin/sh", "-c", "exit 3"));
    long slow = submitted(kairos("submit", "--time", "2s", "--", "sleep", "60"));
    Path marker = dir.resolve("cancelled-ran-to-end");
    long cancelled = submitted(kairos("submit", "--", "/bin/sh", "-c", "sleep 5; touch " + marker));

    waitState(failing, JobState.FAILED);
    assertThat(job(failing).exitCode()).isEqualTo(3);

    waitState(cancelled, JobState.RUNNING);
    var cancel = kairos("cancel", Long.toString(cancelled));
    assertThat(cancel.code()).as(cancel.err()).isZero();
    assertThat(job(cancelled).state()).isEqualTo(JobState.CANCELLED);

    waitState(slow, JobState.FAILED);
    assertThat(job(slow).message()).contains("time limit");
    Thread.sleep(6000); // longer than the cancelled job's own sleep: it must not have finished
    assertThat(marker).doesNotExist();
    // The cancelled job held its GPU until its process was gone; now every GPU is free again.
    waitFor(
        "the local node has no job left",
        Duration.ofSeconds(20),
        () -> get("/api/v1/nodes").contains("\"gpusUsed\":0"));

    var queue = kairos("queue");
    assertThat(queue.code()).isZero();
    var nodes = kairos("nodes");
    assertThat(nodes.out()).contains("local");
  }
}

package io.kairos.cli;

import io.kairos.cli.ckpt.CheckpointStore;
import io.kairos.cli.ckpt.S3Store;
import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real S3-compatible server for tests: S3Proxy (Maven Central, its all-in-one jar copied to
 * target/s3proxy by the build) on its filesystem backend, in a JVM of its own, on a free loopback
 * port, with one access key. Under CI a missing jar fails the test; elsewhere it is skipped.
 */
final class S3TestServer implements AutoCloseable {
  static final Path JAR = Path.of("target", "s3proxy", "s3proxy.jar").toAbsolutePath();
  static final String ACCESS_KEY = "kairos-test";
  static final String SECRET_KEY = "kairos-test-secret";

  final String endpoint;
  private final Process process;
  private final Path log;

  private S3TestServer(String endpoint, Process process, Path log) {
    this.endpoint = endpoint;
    this.process = process;
    this.log = log;
  }

  /** Whether the server's jar is here (the build fetched it). */
  static boolean available() {
    return Files.isRegularFile(JAR);
  }

  /** Starts the server with its data under {@code dir}, and waits until it answers. */
  static S3TestServer start(Path dir) throws Exception {
    int port;
    try (var s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    String endpoint = "http://127.0.0.1:" + port;
    Path data = Files.createDirectories(dir.resolve("s3-data"));
    Path properties = dir.resolve("s3proxy.properties");
    Files.writeString(
        properties,
        String.join(
            "\n",
            "s3proxy.endpoint=" + endpoint,
            "s3proxy.authorization=aws-v2-or-v4",
            "s3proxy.identity=" + ACCESS_KEY,
            "s3proxy.credential=" + SECRET_KEY,
            "jclouds.provider=filesystem",
            "jclouds.filesystem.basedir=" + data,
            ""));
    Path log = dir.resolve("s3proxy.log");
    String java = ProcessHandle.current().info().command().orElse("java");
    Process p =
        new ProcessBuilder(
                java, "-Xmx256m", "-jar", JAR.toString(), "--properties", properties.toString())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    var server = new S3TestServer(endpoint, p, log);
    long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
    while (!server.answers()) {
      if (!p.isAlive() || System.nanoTime() > deadline) {
        server.close();
        throw new IllegalStateException("S3Proxy did not start:\n" + Files.readString(log));
      }
      Thread.sleep(200);
    }
    return server;
  }

  private boolean answers() {
    try {
      var c = (HttpURLConnection) URI.create(endpoint + "/").toURL().openConnection();
      c.setConnectTimeout(500);
      c.setReadTimeout(2000);
      int code = c.getResponseCode();
      c.disconnect();
      return code > 0;
    } catch (IOException e) {
      return false;
    }
  }

  /** What a client (a job, the CLI) needs in its environment to reach the server. */
  Map<String, String> clientEnv() {
    return Map.of(
        "KAIROS_S3_ENDPOINT", endpoint,
        "AWS_ACCESS_KEY_ID", ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY", SECRET_KEY,
        "AWS_DEFAULT_REGION", "us-east-1");
  }

  /** A store on {@code location} (an s3:// URL) with the test's key. */
  CheckpointStore store(String location) throws IOException {
    System.setProperty("aws.accessKeyId", ACCESS_KEY);
    System.setProperty("aws.secretAccessKey", SECRET_KEY);
    return CheckpointStore.open(location, new S3Store.Settings(endpoint, "us-east-1"));
  }

  /** Creates {@code bucket}. */
  void createBucket(String bucket) throws IOException {
    try (var store = (S3Store) store("s3://" + bucket)) {
      store.createBucket();
    }
  }

  String log() {
    try {
      return Files.readString(log);
    } catch (IOException e) {
      return e.toString();
    }
  }

  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }
}

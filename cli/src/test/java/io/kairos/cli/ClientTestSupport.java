package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Instant;
import java.time.InstantSource;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * Base of the client command tests: a {@link FakeKairos}, a fixed environment (no real KAIROS_*
 * variables, the data directory and working directory in a temp dir, a fixed clock in UTC) and
 * {@link #kairos} to run a command line through {@link Main#run(PrintWriter, PrintWriter,
 * String...)}.
 */
abstract class ClientTestSupport {
  static final Instant NOW = Instant.parse("2026-03-28T12:00:00Z");
  static final String TOKEN = "t0k-alice";

  @TempDir Path dir;

  FakeKairos server;
  final Map<String, String> env = new HashMap<>();

  @BeforeEach
  void fixEnvironment() {
    server = new FakeKairos();
    env.put("KAIROS_DATA", dir.resolve("data").toString());
    env.put("KAIROS_SERVER", server.url());
    env.put("KAIROS_TOKEN", TOKEN);
    Environment.variables = env::get;
    Environment.allVariables = () -> Map.copyOf(env);
    Environment.clock = InstantSource.fixed(NOW);
    Environment.zone = ZoneOffset.UTC;
    Environment.workingDirectory = dir;
    Environment.home = dir.resolve("home");
  }

  @AfterEach
  void restoreEnvironment() {
    Environment.reset();
    server.close();
  }

  /** What one command printed and returned. */
  record Result(int code, String out, String err) {
    Result assertOk() {
      assertThat(code).as("exit code; stdout: %s; stderr: %s", out, err).isZero();
      assertThat(err).as("stderr").isEmpty();
      return this;
    }

    /** One line on stderr starting "kairos: ", no stack trace, the given exit code. */
    Result assertError(int exitCode, String... mentions) {
      assertThat(code).as("exit code; stderr: %s", err).isEqualTo(exitCode);
      assertThat(err).as("stderr").startsWith("kairos: ");
      assertThat(err.strip().lines().count()).as("stderr lines: %s", err).isEqualTo(1);
      assertThat(err).as("stderr").doesNotContain("\tat ").doesNotContain("Exception");
      for (String m : mentions) {
        assertThat(err).as("stderr").contains(m);
      }
      return this;
    }
  }

  static Result kairos(String... args) {
    var out = new StringWriter();
    var err = new StringWriter();
    int code = Main.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
    return new Result(code, out.toString(), err.toString());
  }

  /** A port nothing listens on (bound, then released). */
  static int deadPort() {
    try (var socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A JobView in JSON with the given state and extra fields (JSON members, comma-led). */
  static String job(long id, String state, String extra) {
    return """
        {"id":%d,"name":"train-%d","user":"alice","queue":"default","priority":0,"state":"%s",
         "command":["python","train.py"],"workdir":"/home/alice","gpus":8,"tasks":1,"cpus":4,
         "memoryMb":0,"timeLimitSec":3600,"submitTime":"2026-03-28T11:55:00Z","attempt":1,
         "requeues":0%s}"""
        .formatted(id, id, state, extra);
  }
}

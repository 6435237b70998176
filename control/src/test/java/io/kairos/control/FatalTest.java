package io.kairos.control;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A thread the controller cannot run without dies: the process exits with {@link Fatal#EXIT_STATUS}
 * at once, instead of living on without it (as the scheduler thread did: it caught only
 * RuntimeException, and an Error left it dead while the API kept answering).
 */
class FatalTest {
  /** A process whose main thread waits for a minute while a must-not-die thread fails. */
  public static final class Victim {
    public static void main(String[] args) throws Exception {
      Thread.ofPlatform()
          .name("kairos-scheduler")
          .daemon()
          .uncaughtExceptionHandler(Fatal.EXIT)
          .start(
              () -> {
                throw new StackOverflowError("a pass recursed too deep");
              });
      Thread.sleep(60_000);
      System.exit(0);
    }
  }

  @TempDir Path dir;

  @Test
  void aDeadThreadStopsTheProcess() throws Exception {
    Path log = dir.resolve("victim.log");
    var p =
        new ProcessBuilder(
                List.of(
                    ProcessHandle.current().info().command().orElse("java"),
                    "-cp",
                    System.getProperty("java.class.path"),
                    Victim.class.getName()))
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("exits long before its minute").isTrue();
    assertThat(p.exitValue()).isEqualTo(Fatal.EXIT_STATUS);
    assertThat(Files.readString(log))
        .contains("thread kairos-scheduler died")
        .contains("StackOverflowError");
  }
}

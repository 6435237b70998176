package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The Python checkpoint helper ({@code python/kairos_ckpt.py}) by its own tests ({@code
 * python/test_kairos_ckpt.py}), run with Debian's {@code /usr/bin/python3}: the protocol (shards,
 * then the manifest last, atomically), restore of the newest complete checkpoint, a kill -9 while
 * rank 0 writes the manifest, a manifest naming paths outside the directory, pruning, and the
 * report to Kairos with the job's credential.
 */
class PythonCheckpointHelperTest {
  static final Path PYTHON = Path.of("/usr/bin/python3");

  @Test
  void theHelpersOwnTestsPass() throws Exception {
    assumeThat(Files.isExecutable(PYTHON)).as("Debian's python3").isTrue();
    Path dir = Path.of("..", "python").toAbsolutePath().normalize();
    assertThat(dir.resolve("kairos_ckpt.py")).exists();
    Process p =
        new ProcessBuilder(PYTHON.toString(), "-m", "unittest", "-v", "test_kairos_ckpt")
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .start();
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).as(out).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    assertThat(out).containsPattern("test_kill_9_while_writing_the_manifest .*\\.\\.\\. ok");
  }
}

package io.kairos.agent.isolate;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.agent.TaskKey;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A task's registration with the fence watchdog: written for a process that runs, with its start
 * time; skipped, not an error, for one that has already ended (a task that exits at once).
 */
class LeaseFileTest {
  @TempDir Path dataDir;

  @Test
  void registersARunningProcessAndSkipsOneThatHasEnded() throws Exception {
    var lease = LeaseFile.forThisAgent(dataDir);
    Process running = new ProcessBuilder("sleep", "60").start();
    Process ended = new ProcessBuilder("true").start();
    try {
      ended.waitFor();

      assertThat(lease.register(new TaskKey(1, 0, 0), running.toHandle(), Optional.empty()))
          .isTrue();
      assertThat(lease.register(new TaskKey(2, 0, 0), ended.toHandle(), Optional.empty()))
          .isFalse();

      var registered = FenceFiles.readRegistrations(dataDir);
      assertThat(registered).extracting(FenceFiles.Registration::key).containsExactly("1-0-0");
      assertThat(registered.getFirst().process())
          .isEqualTo(ProcessRef.of(running.toHandle()).orElseThrow());
      assertThat(ProcessRef.of(ended.pid())).isEmpty();
    } finally {
      running.destroyForcibly();
    }
  }
}

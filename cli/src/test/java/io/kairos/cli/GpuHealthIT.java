package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.protocol.JobState;
import io.kairos.protocol.JobSubmission;
import io.kairos.protocol.NodeState;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * GPU health end to end: an agent discovers its GPUs through a fake {@code nvidia-smi} (a script
 * printing a recorded 4-GPU PCIe box's output, which the agent's real parsers read), a job runs
 * there, then the fake reports uncorrectable ECC errors rising on GPU 2. The agent's next health
 * check reports it, the controller drains the node with the reason, and the job is requeued onto
 * the other node.
 */
class GpuHealthIT {
  @TempDir Path dir;

  static final Path FIXTURES = Path.of("../agent/src/test/resources").toAbsolutePath().normalize();

  @Test
  void anEccErrorDrainsTheNodeAndTheJobMovesToAHealthyOne() throws Exception {
    Path smiDir = Files.createDirectories(dir.resolve("smi"));
    for (String f : List.of("q.xml", "query.csv", "topo.txt")) {
      Files.copy(FIXTURES.resolve("nvidia-smi/pcie-4gpu/" + f), smiDir.resolve(f));
    }
    Path smi = dir.resolve("nvidia-smi");
    Files.copy(
        FIXTURES.resolve("fake-nvidia-smi/nvidia-smi"), smi, StandardCopyOption.REPLACE_EXISTING);
    Files.setPosixFilePermissions(smi, PosixFilePermissions.fromString("rwxr-xr-x"));
    Path out = Files.createDirectories(dir.resolve("job"));

    try (var cluster = TestCluster.start(dir)) {
      cluster.agent(
          "gpu1",
          2,
          null,
          Map.of("FAKE_NVIDIA_SMI_DIR", smiDir.toString()),
          "--nvidia-smi",
          smi.toString(),
          "--health-interval",
          "1s");
      var node = cluster.node("gpu1").orElseThrow();
      assertThat(node.gpus()).isEqualTo(4);
      assertThat(node.gpuModel()).isNotBlank().isNotEqualTo("EMU");

      long id =
          cluster.submit(
              new JobSubmission(
                  null,
                  List.of(
                      "/bin/sh",
                      "-c",
                      "echo $CUDA_VISIBLE_DEVICES > $KAIROS_CHECKPOINT_DIR/gpus-$KAIROS_ATTEMPT; sleep 600"),
                  null,
                  null,
                  1,
                  null,
                  null,
                  null,
                  "1h",
                  null,
                  null,
                  null,
                  null,
                  null,
                  "2s",
                  null,
                  out.toString(),
                  null,
                  null));
      cluster.waitState(id, JobState.RUNNING, Duration.ofSeconds(30));
      TestCluster.waitFor(
          "attempt 1 wrote its GPUs",
          Duration.ofSeconds(20),
          () -> Files.exists(out.resolve("gpus-1")),
          () -> cluster.agentLog("gpu1"));
      // Discovered GPUs are named by UUID in CUDA_VISIBLE_DEVICES.
      assertThat(Files.readString(out.resolve("gpus-1")).strip()).startsWith("GPU-");

      cluster.agent("spare", 3, "2xEMU");
      // Uncorrectable volatile ECC errors appear on the third GPU.
      String xml = Files.readString(smiDir.resolve("q.xml"));
      int third = nth(xml, "<dram_uncorrectable>0</dram_uncorrectable>", 4);
      Files.writeString(
          smiDir.resolve("q.xml"),
          xml.substring(0, third)
              + "<dram_uncorrectable>2</dram_uncorrectable>"
              + xml.substring(third + "<dram_uncorrectable>0</dram_uncorrectable>".length()));

      TestCluster.waitFor(
          "gpu1 is drained as unhealthy",
          Duration.ofSeconds(30),
          () -> cluster.node("gpu1").map(n -> n.state() == NodeState.DRAINED).orElse(false),
          () -> cluster.agentLog("gpu1") + "\n" + cluster.serverLog());
      assertThat(cluster.node("gpu1").orElseThrow().reason())
          .contains("unhealthy")
          .containsIgnoringCase("ECC");

      TestCluster.waitFor(
          "the job runs again on the spare node",
          Duration.ofSeconds(60),
          () -> cluster.job(id).state() == JobState.RUNNING && cluster.job(id).attempt() == 2,
          () -> cluster.job(id) + "\n" + cluster.serverLog());
      var job = cluster.job(id);
      assertThat(job.placement().get(0).node()).isEqualTo("spare");
      assertThat(job.requeues()).isEqualTo(1);
      assertThat(job.excludeNodes()).contains("gpu1");
      assertThat(job.message()).contains("gpu1");
    }
  }

  /** The index of the {@code n}-th (0-based) occurrence of {@code what}. */
  static int nth(String text, String what, int n) {
    int at = -1;
    for (int i = 0; i <= n; i++) {
      at = text.indexOf(what, at + 1);
      if (at < 0) {
        throw new AssertionError("fewer than " + (n + 1) + " occurrences of " + what);
      }
    }
    return at;
  }
}

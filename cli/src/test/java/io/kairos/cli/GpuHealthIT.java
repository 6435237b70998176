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
 * printing a recorded 4-GPU PCIe box's output, which the agent's real parsers read), two 2-GPU jobs
 * run there, then the fake reports uncorrectable ECC errors rising on GPU 2. The agent's next
 * health check reports it; the controller takes GPU 2 out of service alone (the node stays UP, the
 * reason on that GPU), the job placed with GPU 2 is requeued onto the other node and the job on
 * GPUs 0-1 or 3 keeps running. Then nvidia-smi itself fails (the driver is gone): a problem of the
 * node as a whole, which still drains it.
 */
class GpuHealthIT {
  @TempDir Path dir;

  static final Path FIXTURES = Path.of("../agent/src/test/resources").toAbsolutePath().normalize();

  @Test
  void anEccErrorTakesOneGpuOutTheOtherJobRunsOnAndADriverFailureDrainsTheNode() throws Exception {
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

      long a = cluster.submit(twoGpus(out, "a"));
      long b = cluster.submit(twoGpus(out, "b"));
      cluster.waitState(a, JobState.RUNNING, Duration.ofSeconds(30));
      cluster.waitState(b, JobState.RUNNING, Duration.ofSeconds(30));
      TestCluster.waitFor(
          "both jobs wrote their GPUs",
          Duration.ofSeconds(20),
          () -> Files.exists(out.resolve("a-1")) && Files.exists(out.resolve("b-1")),
          () -> cluster.agentLog("gpu1"));
      // Discovered GPUs are named by UUID in CUDA_VISIBLE_DEVICES.
      assertThat(Files.readString(out.resolve("a-1")).strip()).startsWith("GPU-");
      long onBad = cluster.job(a).placement().get(0).gpus().contains(2) ? a : b;
      long other = onBad == a ? b : a;

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
          "gpu1's GPU 2 is out of service",
          Duration.ofSeconds(30),
          () ->
              cluster
                  .node("gpu1")
                  .map(n -> n.gpusOutOfService() != null && n.gpusOutOfService().containsKey(2))
                  .orElse(false),
          () -> cluster.agentLog("gpu1") + "\n" + cluster.serverLog());
      var gpu1 = cluster.node("gpu1").orElseThrow();
      assertThat(gpu1.state()).as("the node serves its other GPUs").isEqualTo(NodeState.UP);
      assertThat(gpu1.gpusOutOfService()).containsOnlyKeys(2);
      assertThat(gpu1.gpusOutOfService().get(2)).containsIgnoringCase("ECC");

      TestCluster.waitFor(
          "the job placed with GPU 2 runs again on the spare node",
          Duration.ofSeconds(60),
          () -> cluster.job(onBad).state() == JobState.RUNNING && cluster.job(onBad).attempt() == 2,
          () -> cluster.job(onBad) + "\n" + cluster.serverLog());
      var moved = cluster.job(onBad);
      assertThat(moved.placement().get(0).node()).isEqualTo("spare");
      assertThat(moved.requeues()).isEqualTo(1);
      assertThat(moved.message()).contains("GPU 2").contains("gpu1");
      var kept = cluster.job(other);
      assertThat(kept.state()).isEqualTo(JobState.RUNNING);
      assertThat(kept.attempt()).as("the job on the node's other GPUs keeps running").isEqualTo(1);
      assertThat(kept.requeues()).isZero();

      // nvidia-smi cannot reach the driver: the node as a whole is unhealthy, and is drained.
      Files.writeString(
          smiDir.resolve("stderr"),
          "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n");
      Files.writeString(smiDir.resolve("exit"), "9\n");
      TestCluster.waitFor(
          "gpu1 is drained as unhealthy",
          Duration.ofSeconds(30),
          () -> cluster.node("gpu1").map(n -> n.state() == NodeState.DRAINED).orElse(false),
          () -> cluster.agentLog("gpu1") + "\n" + cluster.serverLog());
      assertThat(cluster.node("gpu1").orElseThrow().reason()).contains("unhealthy");
    }
  }

  /** A 2-GPU job that writes its CUDA_VISIBLE_DEVICES to {@code out/NAME-ATTEMPT}, then sleeps. */
  static JobSubmission twoGpus(Path out, String name) {
    return new JobSubmission(
        null,
        List.of(
            "/bin/sh",
            "-c",
            "echo $CUDA_VISIBLE_DEVICES > $KAIROS_CHECKPOINT_DIR/"
                + name
                + "-$KAIROS_ATTEMPT; sleep 600"),
        null,
        null,
        2,
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
        null);
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

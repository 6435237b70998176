package io.kairos.agent.isolate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kairos.agent.TaskKey;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real enforcement on this host's cgroup v1 hierarchies. Skipped unless running as root on a host
 * whose v1 cpu, memory and pids hierarchies are writable.
 */
class CgroupsEnforcementTest {
  static final Path PYTHON = Path.of("/usr/bin/python3");

  @TempDir Path tmp;
  Cgroups cgroups;
  String agent;

  @BeforeEach
  void detect() {
    assumeTrue("root".equals(System.getProperty("user.name")), "needs root");
    agent = "test-" + Long.toHexString(ThreadLocalRandom.current().nextLong());
    cgroups = Cgroups.detect(agent);
    assumeTrue(
        cgroups.layout() instanceof CgroupLayout.V1, "needs cgroup v1: " + cgroups.describe());
    assumeTrue(cgroups.enforcing(), cgroups.describe());
  }

  @AfterEach
  void cleanUp() throws Exception {
    if (cgroups != null && cgroups.enforcing()) {
      cgroups.cleanStale();
      var v1 = (CgroupLayout.V1) cgroups.layout();
      for (String mount : v1.controllers().values()) {
        Files.deleteIfExists(Path.of(mount, "kairos", agent));
      }
    }
  }

  Process start(TaskCgroup cg, List<String> argv, Path out) throws Exception {
    return new ProcessBuilder(cg.wrap(argv))
        .redirectOutput(out.toFile())
        .redirectError(ProcessBuilder.Redirect.DISCARD)
        .start();
  }

  @Test
  void describesWhatIsEnforced() {
    assertThat(cgroups.describe()).startsWith("cgroup v1").contains("enforcing");
  }

  @Test
  void pidsLimitStopsAForkOfAHundredSleeps() throws Exception {
    assumeTrue(Files.isExecutable(PYTHON), "needs " + PYTHON);
    var cg =
        cgroups.create(new TaskKey(1, 0, 0), new TaskLimits(0, 0, 20, List.of())).orElseThrow();
    String script =
        """
        import os, time
        ok = failed = 0
        for _ in range(100):
            try:
                pid = os.fork()
            except OSError:
                failed += 1
                continue
            if pid == 0:
                time.sleep(60)
                os._exit(0)
            ok += 1
        print(ok, failed, flush=True)
        """;
    Path out = tmp.resolve("out");
    Process p = start(cg, List.of(PYTHON.toString(), "-c", script), out);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    String[] counts = Files.readString(out).strip().split(" ");
    int ok = Integer.parseInt(counts[0]);
    int failed = Integer.parseInt(counts[1]);
    assertThat(ok).isLessThan(20);
    assertThat(failed).isGreaterThanOrEqualTo(81);
    assertThat(cg.pids()).hasSize(ok); // the sleeping children, still in the cgroup

    assertThat(cg.killAll()).hasSize(ok);
    assertThat(cg.remove(5_000)).isTrue();
    assertThat(cg.dirs()).allSatisfy(d -> assertThat(d).doesNotExist());
  }

  @Test
  void memoryLimitOomKillsAnAllocationOverIt() throws Exception {
    assumeTrue(Files.isExecutable(PYTHON), "needs " + PYTHON);
    var cg =
        cgroups
            .create(new TaskKey(2, 0, 0), new TaskLimits(0, 64L << 20, 0, List.of()))
            .orElseThrow();
    Process p =
        start(
            cg,
            List.of(PYTHON.toString(), "-c", "b = bytearray(200 * 1024 * 1024); print(len(b))"),
            tmp.resolve("out"));
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).isEqualTo(137);
    assertThat(Files.readString(tmp.resolve("out"))).isEmpty();
    assertThat(cg.remove(5_000)).isTrue();
  }

  @Test
  void theSameAllocationSucceedsUnderAHigherLimit() throws Exception {
    assumeTrue(Files.isExecutable(PYTHON), "needs " + PYTHON);
    var cg =
        cgroups
            .create(new TaskKey(3, 0, 0), new TaskLimits(0, 512L << 20, 0, List.of()))
            .orElseThrow();
    Process p =
        start(
            cg,
            List.of(PYTHON.toString(), "-c", "b = bytearray(200 * 1024 * 1024); print(len(b))"),
            tmp.resolve("out"));
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).isZero();
    assertThat(cg.remove(5_000)).isTrue();
  }

  @Test
  void cpuQuotaOfOneCpuHoldsTwoBusyLoopsToAboutOneCpu() throws Exception {
    assumeTrue(Runtime.getRuntime().availableProcessors() >= 2, "needs 2 CPUs");
    var cg = cgroups.create(new TaskKey(4, 0, 0), new TaskLimits(1, 0, 0, List.of())).orElseThrow();
    Path cpuacct =
        cg.dirs().stream()
            .map(d -> d.resolve("cpuacct.usage"))
            .filter(Files::exists)
            .findFirst()
            .orElse(null);
    assumeTrue(cpuacct != null, "needs the cpuacct controller");
    Process p =
        start(
            cg,
            List.of("/bin/sh", "-c", "while :; do :; done & while :; do :; done"),
            tmp.resolve("out"));
    try {
      Thread.sleep(300); // let both loops start
      long usage0 = Long.parseLong(Files.readString(cpuacct).strip());
      long t0 = System.nanoTime();
      Thread.sleep(2_000);
      long usage1 = Long.parseLong(Files.readString(cpuacct).strip());
      long t1 = System.nanoTime();
      double cpus = (double) (usage1 - usage0) / (t1 - t0);
      // The quota caps it at 1 CPU (two loops would take 2); the lower bound is loose because a
      // shared build machine may not give the loops a whole CPU at all.
      assertThat(cpus).isBetween(0.2, 1.25);
    } finally {
      cg.killAll();
      p.waitFor(5, TimeUnit.SECONDS);
      assertThat(cg.remove(5_000)).isTrue();
    }
  }

  @Test
  void cleanStaleKillsAndRemovesLeftoversOfAnEarlierRun() throws Exception {
    var cg = cgroups.create(new TaskKey(5, 0, 0), TaskLimits.unlimited()).orElseThrow();
    Process p = start(cg, List.of("/bin/sh", "-c", "sleep 60 & sleep 60"), tmp.resolve("out"));
    await().atMost(Duration.ofSeconds(5)).until(() -> cg.pids().size() == 3);

    var again = Cgroups.detect(agent); // as a restarted agent would
    List<String> cleaned = again.cleanStale();

    assertThat(cleaned).singleElement().asString().contains("5-0-0", "removed");
    assertThat(p.waitFor(5, TimeUnit.SECONDS)).isTrue();
    assertThat(cg.dirs()).allSatisfy(d -> assertThat(d).doesNotExist());
  }
}

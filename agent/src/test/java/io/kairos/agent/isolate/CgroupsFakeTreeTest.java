package io.kairos.agent.isolate;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.agent.TaskKey;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The v2 and v1 logic against fake cgroup trees in a temp dir: what is created and written. */
class CgroupsFakeTreeTest {
  static final long MIB = 1024 * 1024;
  static final TaskKey KEY = new TaskKey(42, 1, 0);

  @TempDir Path tmp;

  Path mountinfo(String text) throws IOException {
    return Files.writeString(tmp.resolve("mountinfo"), text);
  }

  Path fakeV2(String controllers) throws IOException {
    Path root = Files.createDirectories(tmp.resolve("sys/fs/cgroup"));
    Files.writeString(root.resolve("cgroup.controllers"), controllers);
    Files.writeString(root.resolve("cgroup.subtree_control"), "");
    return root;
  }

  Path devWith(String... names) throws IOException {
    Path dev = Files.createDirectories(tmp.resolve("dev"));
    for (String n : names) {
      Files.writeString(dev.resolve(n), "");
    }
    return dev;
  }

  @Test
  void v2EnablesControllersDownTheTreeAndWritesLimits() throws IOException {
    Path root = fakeV2("cpuset cpu io memory hugetlb pids rdma");
    var cgroups = Cgroups.detect(mountinfo(CgroupLayoutTest.PURE_V2), tmp, devWith(), "agent-1");

    assertThat(cgroups.enforcing()).isTrue();
    for (Path level : List.of(root, root.resolve("kairos"), root.resolve("kairos/agent-1"))) {
      assertThat(level.resolve("cgroup.subtree_control")).hasContent("+cpu +memory +pids");
    }
    assertThat(cgroups.describe())
        .contains("cgroup v2", "cpu.max, memory.max, pids.max", "eBPF", "CUDA_VISIBLE_DEVICES")
        .doesNotContain("not enforced");

    var cg = cgroups.create(KEY, new TaskLimits(2, 512 * MIB, 100, List.of(0))).orElseThrow();
    Path dir = root.resolve("kairos/agent-1/42-1-0");
    assertThat(cg.dirs()).containsExactly(dir);
    assertThat(dir.resolve("cpu.max")).hasContent("200000 100000");
    assertThat(dir.resolve("memory.max")).hasContent(Long.toString(512 * MIB));
    assertThat(dir.resolve("pids.max")).hasContent("100");
    assertThat(cg.procsFiles()).containsExactly(dir.resolve("cgroup.procs"));
  }

  @Test
  void v2UnlimitedWritesMaxAndDefaultPids() throws IOException {
    Path root = fakeV2("cpu memory pids");
    var cgroups = Cgroups.detect(mountinfo(CgroupLayoutTest.PURE_V2), tmp, devWith(), "a");
    cgroups.create(KEY, TaskLimits.unlimited()).orElseThrow();
    Path dir = root.resolve("kairos/a/42-1-0");
    assertThat(dir.resolve("cpu.max")).hasContent("max 100000");
    assertThat(dir.resolve("memory.max")).hasContent("max");
    assertThat(dir.resolve("pids.max")).hasContent("4096");
  }

  @Test
  void v2WithoutMemoryControllerSaysSoAndWritesNoMemoryFile() throws IOException {
    Path root = fakeV2("cpu pids");
    var cgroups = Cgroups.detect(mountinfo(CgroupLayoutTest.PURE_V2), tmp, devWith(), "a");
    assertThat(cgroups.describe()).contains("enforcing cpu.max, pids.max", "not enforced: memory");
    cgroups.create(KEY, new TaskLimits(1, 64 * MIB, 0, List.of())).orElseThrow();
    assertThat(root.resolve("kairos/a/42-1-0/memory.max")).doesNotExist();
  }

  @Test
  void removeDeletesTheFakeTaskDirectory() throws IOException {
    Path root = fakeV2("cpu memory pids");
    var cgroups = Cgroups.detect(mountinfo(CgroupLayoutTest.PURE_V2), tmp, devWith(), "a");
    var cg = cgroups.create(KEY, TaskLimits.unlimited()).orElseThrow();
    assertThat(cg.remove(100)).isTrue();
    assertThat(root.resolve("kairos/a/42-1-0")).doesNotExist();
  }

  @Test
  void readOnlyHierarchyEnforcesNothingAndSaysWhatStillIsolates() throws IOException {
    Files.createDirectories(tmp.resolve("sys/fs"));
    Files.writeString(tmp.resolve("sys/fs/cgroup"), "not a directory");
    var cgroups = Cgroups.detect(mountinfo(CgroupLayoutTest.PURE_V2), tmp, devWith(), "a");
    assertThat(cgroups.enforcing()).isFalse();
    assertThat(cgroups.create(KEY, TaskLimits.unlimited())).isEmpty();
    assertThat(cgroups.describe())
        .startsWith("cgroups not usable")
        .contains("without cpu/memory/pids limits", "CUDA_VISIBLE_DEVICES", "process tree");
  }

  @Test
  void noMountsAtAll() throws IOException {
    var cgroups = Cgroups.detect(mountinfo(CgroupLayoutTest.NONE), tmp, devWith(), "a");
    assertThat(cgroups.enforcing()).isFalse();
    assertThat(cgroups.layout()).isInstanceOf(CgroupLayout.None.class);
    assertThat(cgroups.describe()).contains("no cgroup or cgroup2 mount");
  }

  @Test
  void v1WritesLimitsPerHierarchyAndDeniesUnassignedGpus() throws IOException {
    Path base = Files.createDirectories(tmp.resolve("sys/fs/cgroup"));
    for (String c : List.of("cpu,cpuacct", "memory", "pids", "devices")) {
      Files.createDirectories(base.resolve(c));
    }
    Path dev = devWith("nvidia0", "nvidia1", "nvidia2", "nvidia3", "nvidiactl", "nvidia-uvm");
    var cgroups = Cgroups.detect(mountinfo(CgroupLayoutTest.V1_ONLY), tmp, dev, "a");
    assertThat(cgroups.describe())
        .contains("cgroup v1", "cpu (cfs quota)", "memory", "pids.max", "devices.deny");

    var cg = cgroups.create(KEY, new TaskLimits(3, 64 * MIB, 20, List.of(1, 2))).orElseThrow();
    Path cpu = base.resolve("cpu,cpuacct/kairos/a/42-1-0");
    assertThat(cg.dirs())
        .containsExactlyInAnyOrder(
            cpu,
            base.resolve("memory/kairos/a/42-1-0"),
            base.resolve("pids/kairos/a/42-1-0"),
            base.resolve("devices/kairos/a/42-1-0"));
    assertThat(cpu.resolve("cpu.cfs_quota_us")).hasContent("300000");
    assertThat(cpu.resolve("cpu.cfs_period_us")).hasContent("100000");
    assertThat(base.resolve("memory/kairos/a/42-1-0/memory.limit_in_bytes"))
        .hasContent(Long.toString(64 * MIB));
    assertThat(base.resolve("pids/kairos/a/42-1-0/pids.max")).hasContent("20");
    assertThat(base.resolve("devices/kairos/a/42-1-0/devices.deny"))
        .hasContent("c 195:0 rwm\nc 195:3 rwm");
    assertThat(cg.notes()).isEmpty();
  }

  @Test
  void v1WithoutNvidiaDevicesSkipsDeviceRulesWithANote() throws IOException {
    Path base = Files.createDirectories(tmp.resolve("sys/fs/cgroup"));
    for (String c : List.of("cpu,cpuacct", "memory", "pids", "devices")) {
      Files.createDirectories(base.resolve(c));
    }
    var cgroups = Cgroups.detect(mountinfo(CgroupLayoutTest.V1_ONLY), tmp, devWith(), "a");
    assertThat(cgroups.describe()).contains("GPU device rules skipped (no /dev/nvidia*");
    var cg = cgroups.create(KEY, new TaskLimits(0, 0, 0, List.of())).orElseThrow();
    assertThat(base.resolve("cpu,cpuacct/kairos/a/42-1-0/cpu.cfs_quota_us")).hasContent("-1");
    assertThat(base.resolve("memory/kairos/a/42-1-0/memory.limit_in_bytes")).doesNotExist();
    assertThat(base.resolve("devices/kairos/a/42-1-0/devices.deny")).doesNotExist();
    assertThat(cg.notes()).anyMatch(n -> n.contains("no /dev/nvidia*"));
  }
}

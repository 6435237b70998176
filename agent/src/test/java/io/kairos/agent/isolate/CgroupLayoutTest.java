package io.kairos.agent.isolate;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The mountinfo parser and layout detection on samples recorded from real hosts. */
class CgroupLayoutTest {
  static final String PURE_V2 =
      """
      22 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw
      25 22 0:23 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw
      30 24 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
      31 24 0:27 / /sys/fs/pstore rw,nosuid,nodev,noexec,relatime shared:10 - pstore pstore rw
      """;

  /** This build machine: v1 controllers under /sys/fs/cgroup, cgroup2 (hugetlb only) at unified. */
  static final String HYBRID =
      """
      23 1 0:21 / / rw,relatime - ext4 /dev/vda rw
      31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
      32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
      33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
      34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
      35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
      36 31 0:33 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices
      37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
      38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio
      39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
      40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
      41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
      """;

  /** CentOS 7 style: v1 only, cpu and cpuacct co-mounted, optional fields present. */
  static final String V1_ONLY =
      """
      18 62 0:17 / /sys rw,nosuid,nodev,noexec,relatime shared:6 - sysfs sysfs rw
      24 18 0:20 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:7 - tmpfs tmpfs ro,mode=755
      25 24 0:21 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime shared:8 - cgroup cgroup rw,xattr,release_agent=/usr/lib/systemd/systemd-cgroups-agent,name=systemd
      28 24 0:24 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:11 - cgroup cgroup rw,cpuacct,cpu
      29 24 0:25 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:12 - cgroup cgroup rw,memory
      30 24 0:26 / /sys/fs/cgroup/pids rw,nosuid,nodev,noexec,relatime shared:13 - cgroup cgroup rw,pids
      31 24 0:27 / /sys/fs/cgroup/devices rw,nosuid,nodev,noexec,relatime shared:14 - cgroup cgroup rw,devices
      """;

  static final String NONE =
      """
      100 90 0:50 / / rw,relatime - overlay overlay rw,lowerdir=/l,upperdir=/u,workdir=/w
      101 100 0:52 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw
      102 100 0:53 / /dev rw,nosuid - tmpfs tmpfs rw,size=65536k,mode=755
      """;

  @Test
  void pureV2Host() {
    assertThat(CgroupLayout.of(MountInfo.parse(PURE_V2)))
        .isEqualTo(new CgroupLayout.V2("/sys/fs/cgroup"));
  }

  @Test
  void hybridHostIsV1WithTheUnifiedMountNoted() {
    var layout = (CgroupLayout.V1) CgroupLayout.of(MountInfo.parse(HYBRID));
    assertThat(layout.controllers())
        .containsEntry("cpu", "/sys/fs/cgroup/cpu")
        .containsEntry("cpuacct", "/sys/fs/cgroup/cpuacct")
        .containsEntry("memory", "/sys/fs/cgroup/memory")
        .containsEntry("pids", "/sys/fs/cgroup/pids")
        .containsEntry("devices", "/sys/fs/cgroup/devices")
        .doesNotContainKey("freezer");
    assertThat(layout.unified()).contains("/sys/fs/cgroup/unified");
  }

  @Test
  void v1OnlyHostWithCoMountedCpuAndCpuacct() {
    var layout = (CgroupLayout.V1) CgroupLayout.of(MountInfo.parse(V1_ONLY));
    assertThat(layout.controllers().get("cpu")).isEqualTo("/sys/fs/cgroup/cpu,cpuacct");
    assertThat(layout.controllers().get("cpuacct")).isEqualTo("/sys/fs/cgroup/cpu,cpuacct");
    assertThat(layout.unified()).isEqualTo(Optional.empty());
  }

  @Test
  void noCgroupMounts() {
    assertThat(CgroupLayout.of(MountInfo.parse(NONE))).isInstanceOf(CgroupLayout.None.class);
    assertThat(CgroupLayout.of(MountInfo.parse(""))).isInstanceOf(CgroupLayout.None.class);
  }

  @Test
  void mountPointsAreUnescaped() {
    var mounts =
        MountInfo.parse("1 0 0:1 / /mnt/a\\040b\\134c rw - cgroup2 none rw\nbroken line\n");
    assertThat(mounts)
        .singleElement()
        .satisfies(
            m -> {
              assertThat(m.mountPoint()).isEqualTo("/mnt/a b\\c");
              assertThat(m.fsType()).isEqualTo("cgroup2");
            });
  }
}

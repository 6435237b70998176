package io.kairos.agent.isolate;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * Which cgroup hierarchy a host mounts, read from its mountinfo alone (pure: no file is touched).
 *
 * <p>A host with any of the v1 controllers Kairos limits (cpu, memory, pids) mounted as cgroup v1
 * is treated as {@link V1}, even when it also mounts a cgroup2 hierarchy: on such "hybrid" hosts
 * the cgroup2 mount (usually {@code /sys/fs/cgroup/unified}) holds no controller that v1 already
 * owns. Otherwise a cgroup2 mount makes it {@link V2}; with neither it is {@link None}.
 */
public sealed interface CgroupLayout {
  /** The v1 controllers Kairos uses; cpuacct only to account, never to limit. */
  Set<String> V1_CONTROLLERS = Set.of("cpu", "cpuacct", "memory", "pids", "devices");

  /** Pure cgroup v2, mounted at {@code root}. */
  record V2(String root) implements CgroupLayout {}

  /** cgroup v1: each controller's mount point, and the cgroup2 mount of a hybrid host, if any. */
  record V1(Map<String, String> controllers, Optional<String> unified) implements CgroupLayout {
    public V1 {
      controllers = Map.copyOf(controllers);
    }
  }

  /** No usable cgroup mount. */
  record None(String why) implements CgroupLayout {}

  static CgroupLayout of(List<MountInfo> mounts) {
    var v1 = new TreeMap<String, String>();
    String v2 = null;
    for (MountInfo m : mounts) {
      switch (m.fsType()) {
        case "cgroup" -> {
          for (String option : m.superOptions()) {
            if (V1_CONTROLLERS.contains(option)) {
              v1.putIfAbsent(option, m.mountPoint());
            }
          }
        }
        case "cgroup2" -> {
          // Prefer the conventional place if a host mounts cgroup2 twice.
          if (v2 == null || m.mountPoint().equals("/sys/fs/cgroup")) {
            v2 = m.mountPoint();
          }
        }
        default -> {}
      }
    }
    boolean v1Limits = v1.containsKey("cpu") || v1.containsKey("memory") || v1.containsKey("pids");
    if (v1Limits) {
      return new V1(v1, Optional.ofNullable(v2));
    }
    if (v2 != null) {
      return new V2(v2);
    }
    return new None("no cgroup or cgroup2 mount in mountinfo");
  }
}

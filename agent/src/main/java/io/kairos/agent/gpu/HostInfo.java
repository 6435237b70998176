package io.kairos.agent.gpu;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The host's CPUs, memory and NUMA nodes, read from Linux's {@code /proc} and {@code /sys}.
 *
 * <p>Files are read under a configurable root ({@code /} on a real node, a temp directory in
 * tests): {@code sys/devices/system/cpu/online}, {@code proc/meminfo} ({@code MemTotal}) and {@code
 * sys/devices/system/node/node*}{@code /cpulist}. A file that does not exist (not Linux, a
 * container without {@code /sys}) leaves its reading at 0 or empty; a file that exists but does not
 * parse is an error naming it. Immutable.
 *
 * @param availableProcessors what the JVM may use ({@link Runtime#availableProcessors()}): smaller
 *     than {@code onlineCpus} under a cgroup CPU limit or affinity mask
 * @param onlineCpus CPUs the kernel has online; 0 when unknown
 * @param memoryBytes {@code MemTotal}; 0 when unknown
 * @param numaNodes in id order; empty when the kernel shows none
 */
public record HostInfo(
    int availableProcessors, int onlineCpus, long memoryBytes, List<NumaNode> numaNodes) {
  private static final Pattern MEM_TOTAL = Pattern.compile("(?m)^MemTotal:\\s+(\\d+)\\s*kB\\s*$");
  private static final Pattern NODE_DIR = Pattern.compile("node(\\d+)");

  public HostInfo {
    numaNodes = List.copyOf(numaNodes);
  }

  /**
   * One NUMA node.
   *
   * @param id the {@code N} of {@code nodeN}
   * @param cpuList the kernel's list, e.g. {@code 0-25,52-77}; "" for a memory-only node
   * @param cpuCount how many CPUs the list names
   */
  public record NumaNode(int id, String cpuList, int cpuCount) {
    public NumaNode {
      Objects.requireNonNull(cpuList, "cpuList");
    }
  }

  /** Reads the real host. */
  public static HostInfo read() throws IOException {
    return read(Path.of("/"), Runtime.getRuntime().availableProcessors());
  }

  /** Reads under {@code root}, with the JVM's processor count given. */
  public static HostInfo read(Path root, int availableProcessors) throws IOException {
    Path online = root.resolve("sys/devices/system/cpu/online");
    int onlineCpus = Files.exists(online) ? countCpus(Files.readString(online), online) : 0;
    Path meminfo = root.resolve("proc/meminfo");
    long memoryBytes = 0;
    if (Files.exists(meminfo)) {
      Matcher m = MEM_TOTAL.matcher(Files.readString(meminfo));
      if (!m.find()) {
        throw new IOException(meminfo + ": no 'MemTotal: <n> kB' line");
      }
      memoryBytes = Long.parseLong(m.group(1)) * 1024;
    }
    return new HostInfo(availableProcessors, onlineCpus, memoryBytes, numaNodes(root));
  }

  private static List<NumaNode> numaNodes(Path root) throws IOException {
    Path dir = root.resolve("sys/devices/system/node");
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    List<NumaNode> nodes = new ArrayList<>();
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir, "node*")) {
      for (Path entry : entries) {
        Matcher m = NODE_DIR.matcher(entry.getFileName().toString());
        Path cpulist = entry.resolve("cpulist");
        if (m.matches() && Files.exists(cpulist)) {
          String list = Files.readString(cpulist).strip();
          nodes.add(new NumaNode(Integer.parseInt(m.group(1)), list, countCpus(list, cpulist)));
        }
      }
    }
    nodes.sort(Comparator.comparingInt(NumaNode::id));
    return nodes;
  }

  /**
   * Counts the CPUs of a kernel CPU list such as {@code 0-3,8,10-11} (7); "" is 0.
   *
   * @throws IOException naming {@code file} when the list does not parse
   */
  static int countCpus(String list, Path file) throws IOException {
    String s = list.strip();
    if (s.isEmpty()) {
      return 0;
    }
    int count = 0;
    for (String range : s.split(",")) {
      String[] ends = range.strip().split("-");
      try {
        if (ends.length == 1) {
          Integer.parseInt(ends[0]);
          count++;
        } else if (ends.length == 2) {
          int from = Integer.parseInt(ends[0]);
          int to = Integer.parseInt(ends[1]);
          if (to < from) {
            throw new NumberFormatException("range " + range + " runs backwards");
          }
          count += to - from + 1;
        } else {
          throw new NumberFormatException("'" + range + "'");
        }
      } catch (NumberFormatException e) {
        throw new IOException(file + ": '" + s + "' is not a CPU list: " + e.getMessage(), e);
      }
    }
    return count;
  }
}

package io.kairos.agent.isolate;

import io.kairos.agent.TaskKey;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Per-task cgroups under {@code <hierarchy>/kairos/<agentName>/<job>-<attempt>-<task>}.
 *
 * <p>Design notes:
 *
 * <ul>
 *   <li><b>Detection</b> reads {@code /proc/self/mountinfo} ({@link CgroupLayout}) and then probes
 *       by creating {@code kairos/<agentName>}: a read-only or unprivileged hierarchy is found at
 *       start, not on the first launch. {@link #describe()} is one line for the agent log that says
 *       what is enforced, what is not, and what still isolates a task without cgroups.
 *   <li><b>Joining before exec.</b> Java cannot move a child into a cgroup between fork and exec,
 *       and moving it after start lets it fork unconfined children first. So the task is launched
 *       through {@link #wrap}: a constant {@code /bin/sh} script writes its own pid into each
 *       {@code cgroup.procs} and then {@code exec}s the user's argv, so the user's program starts
 *       (same pid) already inside. The script text never contains user input; the cgroup files and
 *       the user argv are separate argv entries read as {@code "$@"}, so quotes, {@code $(...)},
 *       spaces or newlines in them are never parsed by the shell. If joining fails the script exits
 *       125 rather than run the task unconfined.
 *   <li><b>v2 devices</b> cannot be limited by writing a file: the kernel wants an eBPF program
 *       attached to the cgroup. That is not done here, and {@link #describe()} says so rather than
 *       pretend; GPU visibility then rests on {@code CUDA_VISIBLE_DEVICES}.
 * </ul>
 *
 * <p>Thread-safe: the state is fixed after {@link #detect}; each task has its own directories.
 */
public final class Cgroups {
  /** Joins every cgroup.procs before "--", then execs what follows. Never contains user text. */
  static final String WRAPPER_SCRIPT =
      """
      while [ "$#" -gt 0 ]; do
        if [ "$1" = -- ]; then shift; exec "$@"; fi
        if ! echo $$ > "$1"; then echo "kairos: cannot join cgroup $1" >&2; exit 125; fi
        shift
      done
      echo "kairos: no command after --" >&2; exit 127
      """;

  /** The exit status of a wrapped task that could not join its cgroup. */
  public static final int JOIN_FAILED_EXIT = 125;

  private static final Pattern NVIDIA_DEVICE = Pattern.compile("nvidia(\\d+)");
  private static final int NVIDIA_MAJOR = 195;
  private static final long CPU_PERIOD_US = 100_000;
  private static final List<String> V2_WANTED = List.of("cpu", "memory", "pids");

  private final CgroupLayout layout;
  private final String agentName;
  private final Path devDir;

  /** Controller (v2: "cpu", "memory", "pids"; v1: also "cpuacct", "devices") to agent directory. */
  private final Map<String, Path> agentDirs;

  private final String description;

  private Cgroups(
      CgroupLayout layout,
      String agentName,
      Path devDir,
      Map<String, Path> agentDirs,
      String description) {
    this.layout = layout;
    this.agentName = agentName;
    this.devDir = devDir;
    this.agentDirs = Map.copyOf(agentDirs);
    this.description = description;
  }

  /** Detects this host's cgroups and prepares {@code kairos/<agentName>} in each usable one. */
  public static Cgroups detect(String agentName) {
    return detect(Path.of("/proc/self/mountinfo"), Path.of("/"), Path.of("/dev"), agentName);
  }

  /**
   * As {@link #detect(String)}, with the files it reads replaced (for tests).
   *
   * @param fsRoot where the mount points of {@code mountinfo} are resolved ({@code /} in
   *     production, a temp dir holding a fake tree in tests)
   * @param devDir where {@code nvidia<N>} device nodes are looked for
   */
  public static Cgroups detect(Path mountinfo, Path fsRoot, Path devDir, String agentName) {
    checkName(agentName);
    String text;
    try {
      text = Files.readString(mountinfo);
    } catch (IOException e) {
      var layout = new CgroupLayout.None("cannot read " + mountinfo + ": " + e.getMessage());
      return new Cgroups(layout, agentName, devDir, Map.of(), notWritable(layout));
    }
    CgroupLayout layout = CgroupLayout.of(MountInfo.parse(text));
    return switch (layout) {
      case CgroupLayout.V2 v2 -> prepareV2(v2, fsRoot, devDir, agentName);
      case CgroupLayout.V1 v1 -> prepareV1(v1, fsRoot, devDir, agentName);
      case CgroupLayout.None none ->
          new Cgroups(none, agentName, devDir, Map.of(), notWritable(none));
    };
  }

  public CgroupLayout layout() {
    return layout;
  }

  /** True when at least one of cpu, memory and pids is limited per task. */
  public boolean enforcing() {
    return agentDirs.containsKey("cpu")
        || agentDirs.containsKey("memory")
        || agentDirs.containsKey("pids");
  }

  /** One line for the agent log: what is enforced, what is not, what isolates tasks regardless. */
  public String describe() {
    return description;
  }

  /**
   * Creates the task's cgroup and writes its limits; empty when this host enforces nothing. A limit
   * the host refuses is noted in {@link TaskCgroup#notes()}, not thrown: the task still runs.
   *
   * @throws IOException when the task's directory cannot be created
   */
  public Optional<TaskCgroup> create(TaskKey key, TaskLimits limits) throws IOException {
    if (agentDirs.isEmpty()) {
      return Optional.empty();
    }
    var dirs = new ArrayList<Path>();
    var notes = new ArrayList<String>();
    try {
      if (layout instanceof CgroupLayout.V2) {
        Path dir = agentDirs.values().iterator().next().resolve(key.dirName());
        Files.createDirectories(dir);
        dirs.add(dir);
        writeV2Limits(dir, limits, notes);
      } else {
        for (var e : agentDirs.entrySet()) {
          Path dir = e.getValue().resolve(key.dirName());
          if (dirs.contains(dir)) {
            continue; // co-mounted controllers (cpu,cpuacct) share one directory
          }
          Files.createDirectories(dir);
          dirs.add(dir);
        }
        writeV1Limits(key, limits, notes);
      }
    } catch (IOException e) {
      TaskCgroup.removeDirs(dirs, 0);
      throw e;
    }
    return Optional.of(new TaskCgroup(key, dirs, notes));
  }

  /**
   * The argv that starts {@code argv} inside {@code cg}: {@code /bin/sh -c <script> kairos-task
   * <cgroup.procs files...> -- <argv...>}. The process keeps its pid through the {@code exec}.
   *
   * @throws IllegalArgumentException if the program name starts with {@code -}, which some shells'
   *     {@code exec} would read as an option
   */
  public static List<String> wrap(TaskCgroup cg, List<String> argv) {
    if (argv.isEmpty() || argv.getFirst().startsWith("-")) {
      throw new IllegalArgumentException("program must be named and not start with '-': " + argv);
    }
    var wrapped = new ArrayList<String>(List.of("/bin/sh", "-c", WRAPPER_SCRIPT, "kairos-task"));
    for (Path procs : cg.procsFiles()) {
      wrapped.add(procs.toString());
    }
    wrapped.add("--");
    wrapped.addAll(argv);
    return List.copyOf(wrapped);
  }

  /**
   * Kills the processes of every task cgroup left under {@code kairos/<agentName>} by an earlier
   * run of this agent and removes the directories. Call once at agent start, before any launch.
   *
   * @return a line per cgroup cleaned, for the log
   */
  public List<String> cleanStale() {
    return cleanStale(Set.of());
  }

  /** As {@link #cleanStale()}, sparing the cgroups of tasks named in {@code adopted}. */
  public List<String> cleanStale(Set<String> adopted) {
    var cleaned = new ArrayList<String>();
    var taskNames = new TreeSet<String>();
    for (Path agentDir : Set.copyOf(agentDirs.values())) {
      try (Stream<Path> children = Files.list(agentDir)) {
        children.filter(Files::isDirectory).forEach(d -> taskNames.add(d.getFileName().toString()));
      } catch (IOException e) {
        cleaned.add("cannot list " + agentDir + ": " + e.getMessage());
      }
    }
    taskNames.removeAll(adopted);
    for (String name : taskNames) {
      List<Path> dirs =
          Set.copyOf(agentDirs.values()).stream()
              .map(d -> d.resolve(name))
              .filter(Files::isDirectory)
              .toList();
      List<Long> killed = TaskCgroup.killAllIn(dirs);
      boolean removed = TaskCgroup.removeDirs(dirs, 2_000);
      cleaned.add(
          "stale cgroup "
              + name
              + ": killed "
              + killed
              + (removed ? ", removed" : ", could not remove " + dirs));
    }
    return cleaned;
  }

  // ---- v2 ----

  private static Cgroups prepareV2(CgroupLayout.V2 v2, Path fsRoot, Path devDir, String agentName) {
    Path root = resolve(fsRoot, v2.root());
    Set<String> available = readWords(root.resolve("cgroup.controllers"));
    Path kairos = root.resolve("kairos");
    Path agentDir = kairos.resolve(agentName);
    try {
      createWritable(agentDir);
    } catch (IOException e) {
      var layout = new CgroupLayout.None(root + " not writable: " + e.getMessage());
      return new Cgroups(v2, agentName, devDir, Map.of(), notWritable(layout));
    }
    // 1. Enable what we want and the host has, top down: a controller must be enabled in a
    //    parent's subtree_control before its child may enable it.
    var problems = new ArrayList<String>();
    //    One write for all; if the kernel refuses it (one controller busy), one at a time so the
    //    others still get enabled.
    List<String> wanted = V2_WANTED.stream().filter(available::contains).toList();
    for (Path level : List.of(root, kairos, agentDir)) {
      Path control = level.resolve("cgroup.subtree_control");
      List<String> toEnable =
          wanted.stream().filter(c -> !readWords(control).contains(c)).map(c -> "+" + c).toList();
      if (toEnable.isEmpty()) {
        continue;
      }
      try {
        Files.writeString(control, String.join(" ", toEnable));
      } catch (IOException all) {
        for (String c : toEnable) {
          try {
            Files.writeString(control, c);
          } catch (IOException e) {
            problems.add(c + " in " + control + ": " + e.getMessage());
          }
        }
      }
    }
    // 2. What a task directory will actually get.
    Set<String> enabled = readWords(agentDir.resolve("cgroup.subtree_control"));
    var agentDirs = new LinkedHashMap<String, Path>();
    for (String c : V2_WANTED) {
      if (enabled.contains(c)) {
        agentDirs.put(c, agentDir);
      }
    }
    List<String> missing = V2_WANTED.stream().filter(c -> !enabled.contains(c)).toList();
    String text =
        "cgroup v2 at "
            + root
            + " (kairos/"
            + agentName
            + "): "
            + (agentDirs.isEmpty()
                ? "no limits enforced"
                : "enforcing " + String.join(", ", v2Files(agentDirs.keySet())))
            + (missing.isEmpty() ? "" : "; not enforced: " + String.join(", ", missing))
            + (problems.isEmpty() ? "" : " (" + String.join("; ", problems) + ")")
            + "; GPU devices NOT restricted by cgroup (v2 device control needs an eBPF program,"
            + " not implemented): GPU visibility is by CUDA_VISIBLE_DEVICES only"
            + (agentDirs.isEmpty()
                ? "; isolation is per-task process tree kill"
                : "; a task is killed whole by its cgroup");
    return new Cgroups(v2, agentName, devDir, agentDirs, text);
  }

  private static List<String> v2Files(Set<String> controllers) {
    var files = new ArrayList<String>();
    for (String c : V2_WANTED) {
      if (controllers.contains(c)) {
        files.add(c + ".max");
      }
    }
    return files;
  }

  private void writeV2Limits(Path dir, TaskLimits limits, List<String> notes) {
    if (agentDirs.containsKey("cpu")) {
      String quota = limits.cpus() == 0 ? "max" : Long.toString(limits.cpus() * CPU_PERIOD_US);
      write(dir.resolve("cpu.max"), quota + " " + CPU_PERIOD_US, notes);
    }
    if (agentDirs.containsKey("memory")) {
      String max = limits.memoryBytes() == 0 ? "max" : Long.toString(limits.memoryBytes());
      write(dir.resolve("memory.max"), max, notes);
      // Without this a limited task swaps instead of being OOM-killed, where the host has swap.
      Path swap = dir.resolve("memory.swap.max");
      if (limits.memoryBytes() != 0 && Files.exists(swap)) {
        write(swap, "0", notes);
      }
    }
    if (agentDirs.containsKey("pids")) {
      write(dir.resolve("pids.max"), Integer.toString(limits.effectivePids()), notes);
    }
    if (!limits.gpuMinors().isEmpty() || !nvidiaMinors().isEmpty()) {
      notes.add("devices: not restricted on cgroup v2 (needs eBPF)");
    }
  }

  // ---- v1 ----

  private static Cgroups prepareV1(CgroupLayout.V1 v1, Path fsRoot, Path devDir, String agentName) {
    var agentDirs = new LinkedHashMap<String, Path>();
    var problems = new ArrayList<String>();
    for (String c : List.of("cpu", "cpuacct", "memory", "pids", "devices")) {
      String mount = v1.controllers().get(c);
      if (mount == null) {
        continue;
      }
      Path agentDir = resolve(fsRoot, mount).resolve("kairos").resolve(agentName);
      try {
        createWritable(agentDir);
        agentDirs.put(c, agentDir);
      } catch (IOException e) {
        problems.add(c + ": " + e.getMessage());
      }
    }
    if (!agentDirs.containsKey("cpu")
        && !agentDirs.containsKey("memory")
        && !agentDirs.containsKey("pids")) {
      var none =
          new CgroupLayout.None(
              "cgroup v1 hierarchies not writable (" + String.join("; ", problems) + ")");
      return new Cgroups(v1, agentName, devDir, Map.of(), notWritable(none));
    }
    var enforced = new ArrayList<String>();
    var missing = new ArrayList<String>();
    (agentDirs.containsKey("cpu") ? enforced : missing).add("cpu (cfs quota)");
    (agentDirs.containsKey("memory") ? enforced : missing).add("memory (limit_in_bytes)");
    (agentDirs.containsKey("pids") ? enforced : missing).add("pids.max");
    boolean gpus = !nvidiaMinors(devDir).isEmpty();
    String devices =
        !agentDirs.containsKey("devices")
            ? "GPU devices NOT restricted (no writable devices controller): visibility by"
                + " CUDA_VISIBLE_DEVICES only"
            : gpus
                ? "GPU devices restricted (devices.deny c 195:N for GPUs not assigned)"
                : "GPU device rules skipped (no /dev/nvidia* on this host)";
    String text =
        "cgroup v1"
            + v1.unified().map(u -> " (hybrid; cgroup2 at " + u + " not used)").orElse("")
            + " (kairos/"
            + agentName
            + "): enforcing "
            + String.join(", ", enforced)
            + (missing.isEmpty() ? "" : "; not enforced: " + String.join(", ", missing))
            + (problems.isEmpty() ? "" : " (" + String.join("; ", problems) + ")")
            + "; "
            + devices
            + "; a task is killed whole by its cgroup.procs";
    return new Cgroups(v1, agentName, devDir, agentDirs, text);
  }

  private void writeV1Limits(TaskKey key, TaskLimits limits, List<String> notes) {
    String name = key.dirName();
    Path cpu = agentDirs.get("cpu");
    if (cpu != null) {
      Path dir = cpu.resolve(name);
      write(dir.resolve("cpu.cfs_period_us"), Long.toString(CPU_PERIOD_US), notes);
      long quota = limits.cpus() == 0 ? -1 : limits.cpus() * CPU_PERIOD_US;
      write(dir.resolve("cpu.cfs_quota_us"), Long.toString(quota), notes);
    }
    Path memory = agentDirs.get("memory");
    if (memory != null && limits.memoryBytes() != 0) {
      Path dir = memory.resolve(name);
      write(dir.resolve("memory.limit_in_bytes"), Long.toString(limits.memoryBytes()), notes);
      // memsw (memory + swap) must be >= limit_in_bytes, so it is written second. It exists only
      // with swap accounting on; without it a task may swap past its limit where swap exists.
      Path memsw = dir.resolve("memory.memsw.limit_in_bytes");
      if (Files.exists(memsw)) {
        write(memsw, Long.toString(limits.memoryBytes()), notes);
      }
    }
    Path pids = agentDirs.get("pids");
    if (pids != null) {
      write(
          pids.resolve(name).resolve("pids.max"), Integer.toString(limits.effectivePids()), notes);
    }
    Path devices = agentDirs.get("devices");
    List<Integer> present = nvidiaMinors();
    if (devices == null) {
      notes.add("devices: no writable devices controller, GPUs not restricted");
    } else if (present.isEmpty()) {
      notes.add("devices: no /dev/nvidia* on this host, rules skipped");
    } else {
      for (int minor : present) {
        if (!limits.gpuMinors().contains(minor)) {
          // One rule per write; appending is how a plain file (a test's fake tree) keeps them all.
          append(
              devices.resolve(name).resolve("devices.deny"),
              "c " + NVIDIA_MAJOR + ":" + minor + " rwm\n",
              notes);
        }
      }
    }
  }

  // ---- helpers ----

  /**
   * Creates {@code dir}, which this process must be able to write: one left by an agent that ran as
   * root is there, but not this (non-root) agent's to use.
   */
  private static void createWritable(Path dir) throws IOException {
    Files.createDirectories(dir);
    if (!Files.isWritable(dir)) {
      throw new IOException(dir + " is not writable by this agent's account");
    }
  }

  private List<Integer> nvidiaMinors() {
    return nvidiaMinors(devDir);
  }

  /** Minors of {@code /dev/nvidia<N>}, sorted; nvidiactl, nvidia-uvm and the like are shared. */
  static List<Integer> nvidiaMinors(Path devDir) {
    try (Stream<Path> entries = Files.list(devDir)) {
      return entries
          .map(p -> NVIDIA_DEVICE.matcher(p.getFileName().toString()))
          .filter(java.util.regex.Matcher::matches)
          .map(m -> Integer.parseInt(m.group(1)))
          .sorted()
          .toList();
    } catch (IOException e) {
      return List.of();
    }
  }

  private static void write(Path file, String value, List<String> notes) {
    try {
      Files.writeString(file, value);
    } catch (IOException e) {
      notes.add("cannot write " + value + " to " + file + ": " + e.getMessage());
    }
  }

  private static void append(Path file, String value, List<String> notes) {
    try {
      Files.writeString(
          file,
          value,
          java.nio.file.StandardOpenOption.CREATE,
          java.nio.file.StandardOpenOption.APPEND);
    } catch (IOException e) {
      notes.add("cannot write " + value.strip() + " to " + file + ": " + e.getMessage());
    }
  }

  /** The words of a file; a leading '+' (as a fake tree records enable requests) is dropped. */
  private static Set<String> readWords(Path file) {
    try {
      String text = Files.readString(file).trim();
      var words = new TreeSet<String>();
      for (String w : text.isEmpty() ? new String[0] : text.split("\\s+")) {
        words.add(w.startsWith("+") ? w.substring(1) : w);
      }
      return words;
    } catch (IOException e) {
      return Set.of();
    }
  }

  private static Path resolve(Path fsRoot, String mountPoint) {
    return fsRoot.resolve(mountPoint.startsWith("/") ? mountPoint.substring(1) : mountPoint);
  }

  private static String notWritable(CgroupLayout.None why) {
    return "cgroups not usable ("
        + why.why()
        + "): tasks run without cpu/memory/pids limits; isolation is GPU visibility by"
        + " CUDA_VISIBLE_DEVICES and the kill of the whole process tree (the fence watchdog kills"
        + " tasks by pid and start time)";
  }

  private static void checkName(String agentName) {
    Objects.requireNonNull(agentName, "agentName");
    if (!agentName.matches("[A-Za-z0-9._-]+") || agentName.startsWith(".")) {
      throw new IllegalArgumentException(
          "agentName must be letters, digits, '.', '_' or '-', got '" + agentName + "'");
    }
  }
}

package io.kairos.agent;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The CPU one supervised start costs, by launch path: the agent's side (this JVM's CPU, all its
 * threads) and the started processes' (this JVM's reaped children), per start. Each start is the
 * supervisor running {@code /bin/true} with a task's environment, as the turnover bench's tasks do.
 * Not a test: run by hand (docs/performance.md, Turnover), with the agent's JVM flags:
 *
 * <pre>
 * scripts/spawn-cost.sh [starts per round] [rounds]
 * </pre>
 */
public final class SpawnCost {
  private SpawnCost() {}

  public static void main(String[] args) throws Exception {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 500;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
    Path dir = Files.createTempDirectory("spawn-cost");
    Path setup = dir.resolve("0.setup");
    Files.createFile(setup);
    Path exit = dir.resolve("0.exit");
    Map<String, String> env = new HashMap<>();
    env.put("PATH", "/usr/bin:/bin");
    env.put("HOME", "/root");
    for (int i = 0; i < 12; i++) {
      env.put("KAIROS_VAR_" + i, "value-" + i + "-" + "x".repeat(20));
    }
    List<String> argv = List.of("/bin/true");
    long init0 = processCpuNanos();
    boolean available = NativeSpawn.available(); // links the C functions: once per agent start
    System.out.printf(
        "native spawn available: %s (loading it, its logger included, took %.0f ms of CPU)%n",
        available, (processCpuNanos() - init0) / 1e6);
    for (int round = 0; round < rounds; round++) {
      for (boolean nativeSpawn : new boolean[] {false, true}) {
        if (nativeSpawn && !NativeSpawn.available()) {
          continue;
        }
        run(nativeSpawn, n / 3, argv, env, exit, setup); // warm-up
        long cpu0 = processCpuNanos();
        long kids0 = childrenTicks();
        long t0 = System.nanoTime();
        run(nativeSpawn, n, argv, env, exit, setup);
        double wall = (System.nanoTime() - t0) / 1e6 / n;
        double cpu = (processCpuNanos() - cpu0) / 1e6 / n;
        double kids = (childrenTicks() - kids0) * 10.0 / n;
        System.out.printf(
            "%-22s %d starts: agent JVM %.3f ms CPU per start, children %.3f ms, wall %.3f ms%n",
            nativeSpawn ? "posix_spawn (FFM)" : "ProcessBuilder+setsid", n, cpu, kids, wall);
      }
    }
  }

  private static void run(
      boolean nativeSpawn, int n, List<String> argv, Map<String, String> env, Path exit, Path setup)
      throws Exception {
    var running = new ArrayList<Process>();
    for (int i = 0; i < n; i++) {
      Process p;
      if (nativeSpawn) {
        p = NativeSpawn.start(Supervisor.wrap(argv, exit, false), env, setup, false);
      } else {
        var b =
            new ProcessBuilder(Supervisor.wrap(argv, exit, true))
                .directory(Path.of("/").toFile())
                .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.appendTo(setup.toFile()));
        b.environment().clear();
        b.environment().putAll(env);
        p = b.start();
      }
      p.toHandle();
      running.add(p);
      if (running.size() >= 8) { // a node's 8 tasks at once
        for (Process r : running) {
          r.waitFor();
        }
        running.clear();
      }
    }
    for (Process r : running) {
      r.waitFor();
    }
  }

  private static long processCpuNanos() {
    var os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    return os.getProcessCpuTime();
  }

  /** This process's reaped children's CPU (cutime + cstime), in clock ticks (10 ms). */
  private static long childrenTicks() throws Exception {
    String stat = Files.readString(Path.of("/proc/self/stat"));
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return Long.parseLong(f[13]) + Long.parseLong(f[14]);
  }
}

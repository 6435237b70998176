package io.kairos.agent;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The agent's {@code bin} directory, first on every task's {@code PATH}: Kairos' own {@code srun}
 * and {@code scontrol} (not Slurm's), small shell scripts that start this agent's Java with its own
 * class path on the CLI's {@value #MAIN}. They talk to the controller with what the task's
 * environment holds ({@link TaskEnvironment}): the controllers' URLs, the cluster CA (copied here
 * as {@code ca.pem}, since the agent's own copy is not the tasks' to read) and the job's step
 * credential.
 *
 * <pre>
 * DATA/bin/          0755  srun, scontrol (0755), ca.pem (0644)
 * </pre>
 *
 * <p>The JVM is started for a fast start (serial GC, C1 only, no perf data): srun runs in loops in
 * batch scripts.
 */
final class SlurmBin {
  /** The class the scripts run: the CLI's Slurm tools. */
  static final String MAIN = "io.kairos.cli.slurm.SlurmTool";

  /** The tools installed, each a script named after it. */
  static final List<String> TOOLS = List.of("srun", "scontrol");

  private static final List<String> JVM_FLAGS =
      List.of(
          "-XX:+UseSerialGC",
          "-XX:TieredStopAtLevel=1",
          "-XX:-UsePerfData",
          "-Xshare:auto",
          "-Xss512k",
          "-Xlog:disable",
          "-Xlog:all=warning:stderr");

  private SlurmBin() {}

  /**
   * Writes the scripts (and the CA) into {@code <dataDir>/bin}, replacing earlier ones, and returns
   * what tasks must be told ({@link TaskEnvironment#BIN}, {@link TaskEnvironment#SERVER}, {@link
   * TaskEnvironment#CA}).
   */
  static Map<String, String> install(Path dataDir, List<String> controllers, Optional<Path> ca)
      throws IOException {
    Path bin = dataDir.toAbsolutePath().resolve("bin");
    Files.createDirectories(bin);
    Files.setPosixFilePermissions(bin, PosixFilePermissions.fromString("rwxr-xr-x"));
    String java = ProcessHandle.current().info().command().orElse("java");
    String classPath = absoluteClassPath(System.getProperty("java.class.path", ""));
    for (String tool : TOOLS) {
      write(bin.resolve(tool), script(java, classPath, tool), "rwxr-xr-x");
    }
    var env = new LinkedHashMap<String, String>();
    env.put(TaskEnvironment.BIN, bin.toString());
    env.put(TaskEnvironment.SERVER, String.join(",", controllers));
    if (ca.isPresent() && Files.isReadable(ca.get())) {
      write(bin.resolve("ca.pem"), Files.readString(ca.get()), "rw-r--r--");
      env.put(TaskEnvironment.CA, bin.resolve("ca.pem").toString());
    }
    return env;
  }

  /** The script of one tool: no user text, only the agent's own paths, quoted. */
  static String script(String java, String classPath, String tool) {
    var argv = new ArrayList<String>();
    argv.add(java);
    argv.addAll(JVM_FLAGS);
    argv.addAll(List.of("-cp", classPath, MAIN, tool));
    var out = new StringBuilder("#!/bin/sh\n");
    out.append("# Kairos' ").append(tool).append(" (written by the Kairos agent; not Slurm's).\n");
    out.append("exec");
    for (String word : argv) {
      out.append(' ').append(quote(word));
    }
    out.append(" \"$@\"\n");
    return out.toString();
  }

  /** Every entry of the class path made absolute: tasks start in other directories. */
  static String absoluteClassPath(String classPath) {
    var out = new ArrayList<String>();
    for (String entry : classPath.split(File.pathSeparator)) {
      if (!entry.isEmpty()) {
        out.add(Path.of(entry).toAbsolutePath().normalize().toString());
      }
    }
    return String.join(File.pathSeparator, out);
  }

  /** {@code 'text'} for sh, a quote inside written as {@code '\''}. */
  static String quote(String text) {
    return "'" + text.replace("'", "'\\''") + "'";
  }

  private static void write(Path file, String text, String mode) throws IOException {
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    Files.deleteIfExists(tmp);
    Files.writeString(tmp, text);
    Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString(mode));
    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }
}

package io.kairos.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code kairos install-slurm-commands [DIR]}: writes {@code sbatch}, {@code squeue}, {@code
 * scancel}, {@code sinfo} and {@code sacct} into DIR, each a two-line shell script that runs this
 * kairos with the command's name ({@code exec kairos sbatch "$@"}), so people and tools that call
 * Slurm's commands reach Kairos. A file there that is not such a script is left alone unless {@code
 * --force}.
 */
@Command(
    name = "install-slurm-commands",
    mixinStandardHelpOptions = true,
    description = {
      "Write sbatch, squeue, scancel, sinfo and sacct into DIR: small scripts that run kairos"
          + " sbatch, kairos squeue, ... (see docs/slurm.md). Put DIR first on your PATH.",
      ""
    })
final class InstallSlurmCommandsCommand implements Callable<Integer> {
  static final List<String> COMMANDS = List.of("sbatch", "squeue", "scancel", "sinfo", "sacct");

  /** The mark of a script this command wrote (so it may overwrite it). */
  static final String MARK = "# Written by kairos install-slurm-commands";

  @Spec CommandSpec spec;

  @Parameters(
      arity = "0..1",
      paramLabel = "DIR",
      description = "Where to write them (default: ~/.local/bin).")
  Path dir;

  @Option(
      names = "--force",
      description = "Replace files of those names that kairos did not write.")
  boolean force;

  @Override
  public Integer call() throws IOException {
    PrintWriter out = spec.commandLine().getOut();
    Path target =
        dir == null
            ? Environment.home.resolve(".local/bin")
            : Environment.workingDirectory.resolve(dir);
    Files.createDirectories(target);
    String kairos = launcher();
    for (String name : COMMANDS) {
      Path file = target.resolve(name);
      if (Files.exists(file) && !force && !Files.readString(file).contains(MARK)) {
        throw new UsageException(
            file + " exists and kairos did not write it; remove it, or give --force to replace it");
      }
      String script =
          "#!/bin/sh\n"
              + MARK
              + ": Slurm's "
              + name
              + ", run by Kairos.\nexec "
              + kairos
              + " "
              + name
              + " \"$@\"\n";
      Files.writeString(file, script);
      Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
      out.println("wrote " + file);
    }
    out.println("Put " + target + " first on your PATH, e.g.: export PATH=" + target + ":$PATH");
    out.flush();
    return 0;
  }

  /**
   * How the scripts run kairos, quoted for sh: the launcher that started this command
   * ($KAIROS_LAUNCHER, which {@code ./kairos} sets), else this JVM with this class path.
   */
  static String launcher() {
    String script = Environment.variable("KAIROS_LAUNCHER");
    if (script != null) {
      return quote(script);
    }
    String java = ProcessHandle.current().info().command().orElse("java");
    return quote(java)
        + " -cp "
        + quote(System.getProperty("java.class.path"))
        + " "
        + Main.class.getName();
  }

  static String quote(String s) {
    return "'" + s.replace("'", "'\\''") + "'";
  }
}

package io.kairos.cli;

import io.kairos.protocol.JobSubmission;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A batch script as a job, the way sbatch sends one: the script's text goes with the job (so an
 * edit after submitting does not change what runs, and the file needs no execute bit), its {@code
 * #SBATCH} and {@code #KAIROS} lines and sbatch's command-line options are read into the job's
 * fields ({@link BatchScript}), and the submitting shell's environment is sent as {@code --export}
 * says ({@link SlurmExport}, by default all of it). The job's command is the script's path as given
 * and its arguments: the controller shows it, and the batch step runs the stored copy with those
 * arguments.
 */
final class ScriptJob {
  private ScriptJob() {}

  /**
   * @param path the script's path (absolute), or a name such as "sbatch" for a script read from
   *     stdin; the job's command[0]
   * @param name the job's default name (sbatch's: the file's name)
   * @param text the script, starting with {@code #!}
   * @param args the script's arguments
   * @param commandLine sbatch's own options, in Slurm's words (empty for {@code kairos submit})
   * @param export the {@code --export} given outside the script; null for the script's, else ALL
   * @param warnings where warnings about the directives go
   */
  static JobSubmission of(
      String path,
      String name,
      String text,
      List<String> args,
      List<String> commandLine,
      String export,
      List<String> warnings) {
    if (text.getBytes(StandardCharsets.UTF_8).length > JobSubmission.MAX_SCRIPT_BYTES) {
      throw new UsageException(
          name
              + ": the script is larger than "
              + (JobSubmission.MAX_SCRIPT_BYTES >> 20)
              + " MiB, the most a job may carry; keep data out of it (read it from a file)");
    }
    var directives = BatchScript.parse(name, text, commandLine);
    warnings.addAll(directives.warnings());
    String exportSpec = export != null ? export : directives.export();
    java.util.Map<String, String> env;
    try {
      env = SlurmExport.variables(exportSpec, Environment.allVariables.get());
    } catch (IllegalArgumentException e) {
      throw new UsageException("--export=" + exportSpec + ": " + e.getMessage());
    }
    var command = new ArrayList<String>();
    command.add(path);
    command.addAll(args);
    var base =
        new JobSubmission(
            name,
            command,
            env.isEmpty() ? null : env,
            null,
            null,
            null,
            null,
            null,
            null,
            null,
            null,
            null,
            null,
            null,
            null,
            null,
            null,
            null,
            null,
            null,
            null,
            null,
            null,
            null,
            null,
            text,
            null,
            null);
    return SubmitCommand.over(SubmitCommand.over(base, directives.sbatch()), directives.kairos());
  }
}

package io.kairos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.protocol.JobSubmission;
import io.kairos.protocol.JobView;
import io.kairos.protocol.SubmitResult;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;

/**
 * {@code kairos sbatch} (installed as {@code sbatch}): Slurm's sbatch over the Kairos API. It takes
 * sbatch's options before the script ({@link SbatchOptions}: the same words as {@code #SBATCH}
 * lines, which they override), the script by its path or on stdin ({@code sbatch < job.sh}) or made
 * of {@code --wrap "cmd"}, and the script's arguments after it. The script's text goes with the job
 * ({@link ScriptJob}). It prints {@code Submitted batch job N}, or {@code N} with {@code
 * --parsable}; {@code -W/--wait} waits for the job's end and exits with its exit code. Output goes
 * to {@code slurm-%j.out} ({@code slurm-%A_%a.out} for an array) in the working directory unless
 * {@code --output} says otherwise, as in Slurm.
 */
@Command(
    name = "sbatch",
    description = "Slurm's sbatch: submit a batch script (kairos sbatch --help for its options).")
final class SbatchCommand extends SlurmCommand {
  /** sbatch's options about the command itself, not the job. */
  private static final List<String> CLIENT =
      List.of("parsable", "wrap", "wait", "test-only", "quiet", "Q", "verbose", "v");

  @Override
  String name() {
    return "sbatch";
  }

  @Override
  String usage() {
    return """
        Usage: sbatch [OPTIONS...] [script [args...]]   (Kairos' sbatch; see docs/slurm.md)
        The script comes from its path, from stdin when none is given, or from --wrap="cmd".
        Job options, as in #SBATCH lines: -J/--job-name, -N/--nodes, -n/--ntasks,
          --ntasks-per-node, --gres=gpu[:type]:N, --gpus-per-node, --gpus-per-task, -G/--gpus,
          -t/--time, -p/--partition, -c/--cpus-per-task, --mem, -x/--exclude, --signal,
          -a/--array, -d/--dependency, -o/--output, -e/--error, -D/--chdir, --open-mode,
          --requeue, --no-requeue, -A/--account, -q/--qos, --export=ALL|NONE|VARS.
          Others (--mail-type, --exclusive, --constraint, ...) are warned about and ignored.
        Command options: --parsable, -W/--wait, --wrap=CMD, --help.
        Any unambiguous prefix of an option works (--out= is --output=), as in Slurm.
        """;
  }

  @Override
  int run(ApiClient api, List<String> words, PrintWriter out, PrintWriter err)
      throws InterruptedException {
    var jobOptions = new ArrayList<String>();
    boolean parsable = false;
    boolean wait = false;
    String wrap = null;
    int i = 0;
    for (; i < words.size(); i++) {
      String w = words.get(i);
      if (w.equals("--")) {
        i++;
        break;
      }
      if (!w.startsWith("-") || w.equals("-")) {
        break;
      }
      String key;
      String attached = null;
      if (w.startsWith("--")) {
        int eq = w.indexOf('=');
        key = SbatchLongOptions.resolve(eq < 0 ? w.substring(2) : w.substring(2, eq));
        attached = eq < 0 ? null : w.substring(eq + 1);
      } else {
        key = w.substring(1, 2);
        attached = w.length() > 2 ? w.substring(2) : null;
        key = key.equals("W") ? "wait" : key;
      }
      boolean takesValue = key.equals("wrap") || SbatchOptions.takesValue(key);
      String value = attached;
      if (takesValue && value == null && i + 1 < words.size()) {
        value = words.get(++i);
      }
      if (!CLIENT.contains(key)) {
        jobOptions.add(w);
        if (takesValue && attached == null && value != null) {
          jobOptions.add(value);
        }
        continue;
      }
      switch (key) {
        case "parsable" -> parsable = true;
        case "wait" -> wait = true;
        case "wrap" -> wrap = value;
        case "quiet", "Q", "verbose", "v" -> {
          // Kairos' sbatch says what it must and no more.
        }
        default -> throw new UsageException("--" + key + " is not supported by Kairos' sbatch");
      }
    }
    List<String> operands = words.subList(Math.min(i, words.size()), words.size());
    String text;
    String path;
    String jobName;
    List<String> scriptArgs;
    if (wrap != null) {
      if (!operands.isEmpty()) {
        throw new UsageException("script arguments not permitted with --wrap option");
      }
      text = "#!/bin/sh\n# This script was created by sbatch --wrap.\n\n" + wrap + "\n";
      path = "wrap";
      jobName = "wrap";
      scriptArgs = List.of();
    } else if (operands.isEmpty() || operands.getFirst().equals("-")) {
      text = read(Environment.stdin.get());
      path = "sbatch";
      jobName = "sbatch";
      scriptArgs = operands.isEmpty() ? List.of() : operands.subList(1, operands.size());
    } else {
      Path file = Environment.workingDirectory.resolve(operands.getFirst());
      if (!Files.isRegularFile(file)) {
        throw new UsageException("Unable to open file " + operands.getFirst());
      }
      text = BatchScript.text(file);
      path = file.toAbsolutePath().normalize().toString();
      jobName = file.getFileName().toString();
      scriptArgs = operands.subList(1, operands.size());
    }
    if (!text.startsWith("#!")) {
      throw new UsageException(
          "This does not look like a batch script.  The first line must start with #! followed"
              + " by the path to an interpreter. For instance: #!/bin/sh");
    }
    var warnings = new ArrayList<String>();
    JobSubmission job = ScriptJob.of(path, jobName, text, scriptArgs, jobOptions, null, warnings);
    job = SubmitCommand.resolvePaths(withDefaultOutput(job));
    for (String w : warnings) {
      warn(err, w);
    }
    JsonNode reply = api.post("/api/v1/jobs", job);
    SubmitResult result = Json.convert(reply, SubmitResult.class);
    if (result.warnings() != null) {
      result.warnings().forEach(w -> warn(err, w));
    }
    err.flush();
    out.println(parsable ? Long.toString(result.id()) : "Submitted batch job " + result.id());
    out.flush();
    if (!wait) {
      return 0;
    }
    int count = result.count() == null ? 1 : result.count();
    int code = 0;
    for (long id = result.id(); id < result.id() + count; id++) {
      code = Math.max(code, waitForEnd(api, id));
    }
    return code;
  }

  /** Slurm's default output file, slurm-%j.out (slurm-%A_%a.out for an array). */
  private static JobSubmission withDefaultOutput(JobSubmission job) {
    if (job.output() != null) {
      return job;
    }
    String output = job.array() != null ? "slurm-%A_%a.out" : "slurm-%j.out";
    var top =
        new JobSubmission(
            null, null, null, null, null, null, null, null, null, null, null, null, null, null,
            null, null, null, null, null, null, null, output, null);
    return SubmitCommand.over(job, top);
  }

  /** Polls the job until it ends (100 ms doubling to 1 s); its exit code as sbatch -W gives it. */
  private static int waitForEnd(ApiClient api, long id) throws InterruptedException {
    long sleepMs = 100;
    while (true) {
      JobView job = Json.convert(api.get("/api/v1/jobs/" + id), JobView.class);
      if (job.state().isFinal()) {
        return JobText.exitCode(job);
      }
      Thread.sleep(sleepMs);
      sleepMs = Math.min(1000, sleepMs * 2);
    }
  }

  private static String read(InputStream in) {
    try {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UsageException("cannot read the script from stdin: " + ApiClient.describe(e));
    }
  }
}

package io.kairos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.protocol.CheckpointLocation;
import io.kairos.protocol.JobState;
import io.kairos.protocol.JobSubmission;
import io.kairos.protocol.JobView;
import io.kairos.protocol.SubmitResult;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code kairos submit}: one job, from a job file ({@link JobFile}), a script, or a command after
 * {@code --}. Options on the command line override the file's values.
 */
@Command(
    name = "submit",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Submit a job: a program and its arguments (after --), a script starting with #!, or a job"
          + " file (YAML or JSON whose keys are the API's JobSubmission fields).",
      "Options given here override the job file's values and the script's #SBATCH and #KAIROS"
          + " directives (see docs/slurm.md).",
      "",
      "Examples:",
      "  kairos submit --gpus 8 --time 2h -- python train.py --lr 0.1",
      "  kairos submit --gpus 16 --gpus-per-node 8 --name llama -- torchrun train.py",
      "  kairos submit train.sh",
      "  kairos submit slurm-job.sh      (reads its #SBATCH and #KAIROS lines, like sbatch)",
      "  kairos submit job.yaml --queue research --wait",
      ""
    },
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:submitted (with --wait: the job succeeded)",
      "1:failed: no controller answered, or it refused; with --wait: the job was cancelled, or"
          + " failed without an exit code in 1..255",
      "2:bad input: a wrong option or job file, or the controller said the request was invalid",
      "N:with --wait: the job failed with exit code N"
    })
final class SubmitCommand extends ApiCommand {
  private static final Pattern MEMORY =
      Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*([kmgt]?)(?:i?b)?", Pattern.CASE_INSENSITIVE);

  @Parameters(
      paramLabel = "JOB_FILE | SCRIPT | -- PROGRAM [ARG...]",
      arity = "0..*",
      description =
          "A job file (job.yaml, job.json), a script (run as is when its first line starts"
              + " with #!, else with /bin/sh when it is named *.sh or holds #SBATCH or #KAIROS"
              + " lines; with any arguments that follow), or, after --, the program and its"
              + " arguments.")
  List<String> args = new ArrayList<>();

  @Option(
      names = "--name",
      paramLabel = "NAME",
      description = "A label for people (default: the program's name).")
  String name;

  @Option(
      names = "--gpus",
      paramLabel = "N|MIN-MAX",
      description =
          "GPUs in total (default 0). All on one node unless --gpus-per-node is given."
              + " A range (8-32, with --gpus-per-node 8) makes the job elastic: 1 to 4 nodes.")
  String gpus;

  @Option(
      names = "--gpus-per-node",
      paramLabel = "N",
      description =
          "Spread --gpus over --gpus / N nodes, one process per node, started together (a gang).")
  Integer gpusPerNode;

  @Option(
      names = "--ntasks",
      paramLabel = "N",
      description = "Processes in all (Slurm's --ntasks; default one per node).")
  Integer ntasks;

  @Option(
      names = "--ntasks-per-node",
      paramLabel = "N",
      description = "Processes on each node, each with its own RANK and LOCAL_RANK (default 1).")
  Integer ntasksPerNode;

  @Option(
      names = "--gpus-per-task",
      paramLabel = "N",
      description = "GPUs each process sees, its own (default: all of its node's).")
  Integer gpusPerTask;

  @Option(
      names = "--cpus",
      paramLabel = "N",
      description = "CPUs reserved per process (default 1 for a CPU-only job, 0 for a GPU job).")
  Integer cpus;

  @Option(
      names = "--mem",
      paramLabel = "SIZE",
      description =
          "Memory per process: 512M, 4G, 1.5G, 1T; a bare number is MiB (default: not limited).")
  String memory;

  @Option(
      names = "--time",
      paramLabel = "LIMIT",
      description =
          "The longest the job may run: 3600 (seconds), 90s, 30m, 2h, 1d or 1:30:00 (default 1 day).")
  String timeLimit;

  @Option(names = "--queue", paramLabel = "QUEUE", description = "The queue (default: default).")
  String queue;

  @Option(
      names = "--priority",
      paramLabel = "N",
      description = "Higher runs first within its queue (default 0).")
  Integer priority;

  @Option(
      names = "--gpu-model",
      paramLabel = "MODEL",
      description = "The GPU model every node must have, e.g. H100 (default: any).")
  String gpuModel;

  @Option(
      names = "--env",
      paramLabel = "KEY=VALUE",
      description = "An environment variable for the tasks (repeatable).")
  Map<String, String> env;

  @Option(
      names = "--workdir",
      paramLabel = "DIR",
      description = "Working directory on the nodes (default: the current directory).")
  Path workdir;

  @Option(
      names = "--user",
      paramLabel = "USER",
      description = "Submit on behalf of USER (admins only; default: the token's user).")
  String user;

  @Option(
      names = "--kill-signal",
      paramLabel = "SIG",
      description =
          "The first signal of a cancel, time limit or preemption: TERM (default), INT, HUP, QUIT, USR1 or USR2; SIGKILL follows after --grace.")
  String killSignal;

  @Option(
      names = "--grace",
      paramLabel = "TIME",
      description =
          "Time to checkpoint and exit after the kill signal, before SIGKILL (default 30s).")
  String grace;

  @Option(
      names = "--signal",
      paramLabel = "SIG[@SECONDS]",
      description =
          "Like Slurm's --signal: send SIG this many seconds before the time limit (default 60), e.g. USR1@120.")
  String warnSignal;

  @Option(
      names = "--checkpoint-dir",
      paramLabel = "DIR|s3://BUCKET/PREFIX",
      description =
          "Where the job's checkpoints live, kept across requeues so a requeued job resumes from its checkpoint: a directory (every task gets KAIROS_CHECKPOINT_DIR) or S3-compatible object storage (KAIROS_CHECKPOINT_URL, and the node's KAIROS_S3_ENDPOINT).")
  String checkpointDir;

  @Option(
      names = "--checkpoint",
      paramLabel = "[KEY=VALUE,...]",
      arity = "0..1",
      fallbackValue = "",
      description =
          "The job checkpoints with Kairos: a private KAIROS_CHECKPOINT_DIR, its checkpoints recorded (kairos checkpoints), preemption by checkpoint. Keys: signal (USR1), timeout (2m), every (30m), keep (3).")
  String checkpoint;

  @Option(
      names = "--max-restarts",
      paramLabel = "N",
      description =
          "Restart the whole gang up to N times when a task fails (default 0). A lost node always requeues the job.")
  Integer maxRestarts;

  @Option(
      names = {"--exclude", "-x"},
      paramLabel = "NODE[,NODE...]",
      split = ",",
      description = "Nodes the job must not run on.")
  List<String> exclude;

  @Option(
      names = "--stdout",
      paramLabel = "FILE",
      description =
          "Where each task's stdout goes, like Slurm's --output: a path with %%j (job id), %%t (rank), %%N (node), %%u (user), %%x (name), %%A and %%a (array job and index), %%%% (a %%); relative to --workdir; appended to (default: the task's directory on its node, read with kairos logs).")
  String stdoutPattern;

  @Option(
      names = "--stderr",
      paramLabel = "FILE",
      description =
          "Where each task's stderr goes, like Slurm's --error; patterns as for --stdout (default: with --stdout, the same file; else the task's directory).")
  String stderrPattern;

  @Option(
      names = "--array",
      paramLabel = "INDEXES",
      description = "Like Slurm's --array: one job per index, e.g. 0-15, 1,3,5, 0-15%%4, 0-20:2.")
  String array;

  @Option(
      names = "--dependency",
      paramLabel = "TYPE:ID[:ID...]",
      description =
          "Like Slurm's --dependency: afterok:12, afterany:14, afternotok:15, after:16; several joined by ','.")
  String dependency;

  @Option(
      names = {"--account", "-A"},
      paramLabel = "ACCOUNT",
      description =
          "The fair-share account charged for the job, like Slurm's --account (default: the queue's default account, else your user).")
  String account;

  @Option(
      names = "--priority-class",
      paramLabel = "CLASS",
      description =
          "A priority class of the controller's tenancy file: it sets the priority and whether the job may be preempted (default: the queue's default class).")
  String priorityClass;

  @Option(
      names = "--qos",
      paramLabel = "QOS",
      description =
          "Like Slurm's --qos: the priority class of that name when there is one; else the job runs without one and the controller warns (unless the site makes it an error).")
  String qos;

  @Option(
      names = "--nodes",
      paramLabel = "N",
      description =
          "For a job without GPUs: spread it over N nodes, one process each (with GPUs, use --gpus-per-node).")
  Integer nodes;

  @Option(
      names = "--export",
      paramLabel = "ALL|NONE|VARS",
      description =
          "Like Slurm's --export: which of this shell's variables the job gets: ALL, NONE, or names and NAME=VALUE pairs (default: ALL for a script, as sbatch; NONE for a program after --).")
  String export;

  /** Warnings about the script's directives, printed before the job is sent. */
  final List<String> warnings = new ArrayList<>();

  @Option(
      names = "--wait",
      description =
          "Wait until the job ends, printing its state as it changes; exit with the job's exit code (1 if it was cancelled).")
  boolean waitForEnd;

  @Override
  int run(ApiClient api, PrintWriter out) throws InterruptedException {
    JobSubmission job = submission();
    PrintWriter err = spec.commandLine().getErr();
    for (String warning : warnings) {
      err.println("kairos: " + warning);
    }
    err.flush();
    JsonNode reply = api.post("/api/v1/jobs", job);
    long id = Json.convert(reply, SubmitResult.class).id();
    if (!waitForEnd) {
      if (isJson()) {
        Json.print(out, reply);
      } else {
        out.println("Submitted job " + id);
      }
      return 0;
    }
    if (!isJson()) {
      out.println("Submitted job " + id);
      out.flush();
    }
    JsonNode end = waitUntilFinal(api, id, out);
    JobView view = Json.convert(end, JobView.class);
    if (isJson()) {
      Json.print(out, end);
    } else {
      out.println(JobText.stateLine(view));
    }
    return JobText.exitCode(view);
  }

  /** Polls the job (100 ms, doubling to 1 s) until it is final; prints state changes. */
  private JsonNode waitUntilFinal(ApiClient api, long id, PrintWriter out)
      throws InterruptedException {
    JobState last = null;
    long sleepMs = 100;
    while (true) {
      JsonNode node = api.get("/api/v1/jobs/" + id);
      JobView job = Json.convert(node, JobView.class);
      if (job.state().isFinal()) {
        return node;
      }
      if (!isJson() && job.state() != last) {
        out.println(JobText.stateLine(job));
        out.flush();
      }
      last = job.state();
      Thread.sleep(sleepMs);
      sleepMs = Math.min(1000, sleepMs * 2);
    }
  }

  /**
   * What to submit: the job file, the script (with its directives) or the command, then the options
   * over it. Warnings about directives go to {@link #warnings}.
   */
  JobSubmission submission() {
    JobSubmission job = over(base(), flags());
    return resolvePaths(job);
  }

  /**
   * {@code job} with its working directory absolute (default: the current directory, as sbatch's
   * --chdir) and relative output patterns in it.
   */
  static JobSubmission resolvePaths(JobSubmission job) {
    String dir =
        job.workdir() != null ? absolute(job.workdir()) : Environment.workingDirectory.toString();
    return new JobSubmission(
            job.name(),
            job.command(),
            job.env(),
            dir,
            job.gpus(),
            job.gpusPerNode(),
            job.cpus(),
            job.memoryMb(),
            job.timeLimit(),
            job.queue(),
            job.priority(),
            job.gpuModel(),
            job.user(),
            job.killSignal(),
            job.gracePeriod(),
            job.warnSignal(),
            job.checkpointDir(),
            job.maxRestarts(),
            job.excludeNodes(),
            job.array(),
            job.dependency(),
            inDirectory(job.output(), dir),
            inDirectory(job.error(), dir),
            job.account(),
            job.priorityClass(),
            job.script(),
            job.nodes(),
            job.qos())
        .withTasks(job.ntasks(), job.ntasksPerNode(), job.gpusPerTask())
        .withCheckpoint(job.checkpoint())
        .withGpus(job.gpus(), job.maxGpus());
  }

  /** The options given, as a submission without a command; unset options are null. */
  JobSubmission flags() {
    GpuRange range = gpus == null ? null : GpuRange.parse(gpus, "--gpus");
    return new JobSubmission(
            name,
            null,
            env == null || env.isEmpty() ? null : new LinkedHashMap<>(env),
            workdir == null ? null : absolute(workdir.toString()),
            null,
            gpusPerNode,
            cpus,
            memory == null ? null : Long.valueOf(memoryMb(memory)),
            timeLimit,
            queue,
            priority,
            gpuModel,
            user,
            killSignal,
            grace,
            warnSignal,
            checkpointDir == null ? null : checkpointLocation(checkpointDir),
            maxRestarts,
            exclude,
            array,
            dependency,
            stdoutPattern,
            stderrPattern,
            account,
            priorityClass,
            null,
            nodes,
            qos)
        .withTasks(ntasks, ntasksPerNode, gpusPerTask)
        .withCheckpoint(checkpoint == null ? null : CheckpointOption.parse(checkpoint))
        .withGpus(range == null ? null : range.min(), range == null ? null : range.max());
  }

  /** {@code top}'s fields where set, else {@code under}'s; the env maps are merged. */
  static JobSubmission over(JobSubmission under, JobSubmission top) {
    if (top == null) {
      return under;
    }
    Map<String, String> env = under.env();
    if (top.env() != null && !top.env().isEmpty()) {
      env = env == null ? new LinkedHashMap<>() : new LinkedHashMap<>(env);
      env.putAll(top.env());
    }
    return new JobSubmission(
            or(top.name(), under.name()),
            or(top.command(), under.command()),
            env,
            or(top.workdir(), under.workdir()),
            or(top.gpus(), under.gpus()),
            or(top.gpusPerNode(), under.gpusPerNode()),
            or(top.cpus(), under.cpus()),
            or(top.memoryMb(), under.memoryMb()),
            or(top.timeLimit(), under.timeLimit()),
            or(top.queue(), under.queue()),
            or(top.priority(), under.priority()),
            or(top.gpuModel(), under.gpuModel()),
            or(top.user(), under.user()),
            or(top.killSignal(), under.killSignal()),
            or(top.gracePeriod(), under.gracePeriod()),
            or(top.warnSignal(), under.warnSignal()),
            or(top.checkpointDir(), under.checkpointDir()),
            or(top.maxRestarts(), under.maxRestarts()),
            or(top.excludeNodes(), under.excludeNodes()),
            or(top.array(), under.array()),
            or(top.dependency(), under.dependency()),
            or(top.output(), under.output()),
            or(top.error(), under.error()),
            or(top.account(), under.account()),
            or(top.priorityClass(), under.priorityClass()),
            or(top.script(), under.script()),
            or(top.nodes(), under.nodes()),
            or(top.qos(), under.qos()))
        .withTasks(
            or(top.ntasks(), under.ntasks()),
            or(top.ntasksPerNode(), under.ntasksPerNode()),
            or(top.gpusPerTask(), under.gpusPerTask()))
        .withCheckpoint(or(top.checkpoint(), under.checkpoint()))
        .withGpus(
            or(top.gpus(), under.gpus()), top.gpus() != null ? top.maxGpus() : under.maxGpus());
  }

  /** A relative output pattern is relative to the job's working directory, as in Slurm. */
  private static String inDirectory(String pattern, String dir) {
    if (pattern == null || pattern.isEmpty() || pattern.startsWith("/")) {
      return pattern;
    }
    return Path.of(dir).resolve(pattern).normalize().toString();
  }

  private JobSubmission base() {
    if (args.isEmpty()) {
      throw new UsageException(
          "nothing to run: give a program after -- (kairos submit -- python train.py),"
              + " a script or a job file (kairos submit job.yaml)");
    }
    if (spec.commandLine().getParseResult().originalArgs().contains("--")) {
      return export == null ? command(List.copyOf(args), null) : exported(command(args, null));
    }
    Path file = Environment.workingDirectory.resolve(args.getFirst());
    if (!Files.isRegularFile(file)) {
      throw new UsageException(
          "no such job file: "
              + args.getFirst()
              + " (to run a program, put it after --:"
              + " kairos submit [options] -- "
              + String.join(" ", args)
              + ")");
    }
    boolean shebang = JobFile.isScript(file);
    String text = null;
    if (shebang || BatchScript.isShellScript(file, text = BatchScript.text(file))) {
      String script = text != null ? text : BatchScript.text(file);
      // Stored with the job, as sbatch stores it; a shell script without #! runs with /bin/sh.
      if (!shebang) {
        script = "#!/bin/sh\n" + script;
      }
      return ScriptJob.of(
          file.toAbsolutePath().normalize().toString(),
          file.getFileName().toString(),
          script,
          args.subList(1, args.size()),
          List.of(),
          export,
          warnings);
    }
    if (args.size() > 1) {
      throw new UsageException(
          args.getFirst()
              + " is a job file: it takes no arguments (to run a program with"
              + " arguments, put it after --: kairos submit [options] -- PROGRAM ARGS...)");
    }
    JobSubmission fromFile = JobFile.read(file);
    if (fromFile.command() == null || fromFile.command().isEmpty()) {
      throw new UsageException(
          args.getFirst() + ": no command; add e.g. command: [python, train.py]");
    }
    return fromFile;
  }

  /** A program's job with the environment {@code --export} names. */
  private JobSubmission exported(JobSubmission job) {
    Map<String, String> env;
    try {
      env = SlurmExport.variables(export, Environment.allVariables.get());
    } catch (IllegalArgumentException e) {
      throw new UsageException("--export=" + export + ": " + e.getMessage());
    }
    return over(
        job,
        new JobSubmission(
            null, null, env, null, null, null, null, null, null, null, null, null, null));
  }

  private static JobSubmission command(List<String> command, String name) {
    return new JobSubmission(
        name, command, null, null, null, null, null, null, null, null, null, null, null);
  }

  /** A directory made absolute against the working directory; an {@code s3://} URL as it is. */
  private static String checkpointLocation(String location) {
    return CheckpointLocation.isObjectStorage(location) ? location : absolute(location);
  }

  private static String absolute(String dir) {
    return Environment.workingDirectory.resolve(dir).normalize().toString();
  }

  private static <T> T or(T option, T fromFile) {
    return option != null ? option : fromFile;
  }

  /** {@code 4G} → 4096, {@code 512M} → 512, {@code 1.5G} → 1536; a bare number is MiB. */
  static long memoryMb(String text) {
    Matcher m = MEMORY.matcher(text.strip());
    if (!m.matches()) {
      throw new UsageException("--mem: cannot read '" + text + "'; use a size such as 512M or 4G");
    }
    double value = Double.parseDouble(m.group(1));
    double factor =
        switch (m.group(2).toLowerCase(Locale.ROOT)) {
          case "k" -> 1.0 / 1024;
          case "", "m" -> 1;
          case "g" -> 1024;
          case "t" -> 1024 * 1024;
          default -> throw new IllegalStateException("unit " + m.group(2));
        };
    return (long) Math.ceil(value * factor);
  }
}

package io.kairos.control.api;

import io.kairos.config.Tenancy;
import io.kairos.control.auth.Principal;
import io.kairos.control.state.ControlState;
import io.kairos.control.state.Dependency;
import io.kairos.control.state.JobArray;
import io.kairos.control.state.JobRequest;
import io.kairos.core.model.JobSpec;
import io.kairos.core.tenancy.Tenants;
import io.kairos.protocol.CheckpointLocation;
import io.kairos.protocol.JobSubmission;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Turns a {@link JobSubmission} into a {@link JobRequest}: checks every field against its bounds
 * and applies the defaults. Each error names the field and the fix.
 */
public final class Submissions {
  public static final int MAX_ARGS = 1024;
  public static final int MAX_ARG_CHARS = 8192;
  public static final int MAX_ENV = 1024;
  public static final int MAX_ENV_VALUE_CHARS = 32_768;
  public static final int MAX_GPUS = 4096;
  public static final int MAX_GPUS_PER_NODE = 64;
  public static final long MAX_TIME_LIMIT_SEC = 365L * 24 * 3600;
  public static final long DEFAULT_TIME_LIMIT_SEC = 24 * 3600;
  public static final long MAX_GRACE_SEC = 3600;
  public static final long DEFAULT_WARN_BEFORE_SEC = 60;
  public static final int MAX_RESTARTS = 100;
  private static final Pattern NODE = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,62}");

  private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,127}");
  private static final Pattern QUEUE = Pattern.compile("[a-z0-9][a-z0-9._-]{0,62}");
  private static final Pattern USER = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._@-]{0,63}");
  private static final Pattern TIME = Pattern.compile("(\\d{1,9})([smhd]?)");
  private static final Pattern CLOCK =
      Pattern.compile("(?:(\\d{1,4})-)?(\\d{1,5}):(\\d{2})(?::(\\d{2}))?");

  private Submissions() {}

  public static JobRequest validate(JobSubmission s, Principal who) {
    return validate(s, who, "", null);
  }

  public static JobRequest validate(JobSubmission s, Principal who, String prefix) {
    return validate(s, who, prefix, null);
  }

  /**
   * {@code prefix} names the element in a batch ("[3].") so errors point at it. With {@code
   * tenancy}, the queue and priority class must be configured ones and an account given must be in
   * the account tree; the request comes back resolved (account, class, and the class's value as
   * priority). Without it, queues are free-form and no priority class may be named.
   */
  public static JobRequest validate(
      JobSubmission s, Principal who, String prefix, Tenancy tenancy) {
    if (s == null) {
      throw ApiError.invalid(
          prefix.isEmpty() ? null : prefix.substring(0, prefix.length() - 1),
          "a job must be a JSON object",
          null);
    }
    List<String> command = command(s.command(), prefix);
    Map<String, String> env = env(s.env(), prefix);
    String workdir = s.workdir() == null ? "" : s.workdir();
    check(
        workdir.isEmpty() || workdir.startsWith("/"),
        prefix + "workdir",
        "workdir must be an absolute path, got '" + clip(workdir) + "'",
        "give an absolute path, or leave it out to run in the job's own directory");
    check(
        workdir.length() <= 4096 && workdir.indexOf('\0') < 0,
        prefix + "workdir",
        "workdir is too long or contains NUL",
        "give a path under 4096 characters");

    int gpus = s.gpus() == null ? 0 : s.gpus();
    check(
        gpus >= 0 && gpus <= MAX_GPUS,
        prefix + "gpus",
        "gpus must be between 0 and " + MAX_GPUS + ", got " + gpus,
        "ask for 0 to " + MAX_GPUS);
    int perNode = 0;
    if (s.gpusPerNode() != null) {
      perNode = s.gpusPerNode();
      check(
          perNode >= 1 && perNode <= MAX_GPUS_PER_NODE,
          prefix + "gpusPerNode",
          "gpusPerNode must be between 1 and " + MAX_GPUS_PER_NODE + ", got " + perNode,
          "set it to the GPUs each node gives the job, e.g. 8");
      int p = perNode;
      check(
          gpus > 0 && gpus % perNode == 0,
          prefix + "gpusPerNode",
          "gpus (" + gpus + ") must be a positive multiple of gpusPerNode (" + p + ")",
          "set gpus to nodes x gpusPerNode, e.g. " + (2 * p) + " for two nodes");
    } else {
      check(
          gpus <= MAX_GPUS_PER_NODE,
          prefix + "gpus",
          gpus + " GPUs do not fit one node (at most " + MAX_GPUS_PER_NODE + ")",
          "set gpusPerNode to spread the job over several nodes");
    }
    int maxGpus = ElasticSubmissions.maxGpus(s, gpus, perNode, prefix);
    int cpus = s.cpus() == null ? (gpus == 0 ? 1 : 0) : s.cpus();
    check(
        cpus >= 0 && cpus <= 4096,
        prefix + "cpus",
        "cpus must be between 0 and 4096, got " + cpus,
        "ask for the CPUs each process needs");
    long memoryMb = s.memoryMb() == null ? 0 : s.memoryMb();
    check(
        memoryMb >= 0 && memoryMb <= (1L << 30),
        prefix + "memoryMb",
        "memoryMb must be between 0 and " + (1L << 30) + ", got " + memoryMb,
        "ask for the memory each process needs, in MiB");
    check(
        gpus > 0 || cpus > 0 || memoryMb > 0,
        prefix + "cpus",
        "a job must ask for at least one GPU, CPU or MiB of memory",
        "set gpus or cpus");

    long timeLimit =
        s.timeLimit() == null ? DEFAULT_TIME_LIMIT_SEC : timeLimit(s.timeLimit(), prefix);
    String queue = s.queue() == null ? "default" : s.queue();
    check(
        QUEUE.matcher(queue).matches(),
        prefix + "queue",
        "queue '" + clip(queue) + "' is not a valid queue name",
        "use lower-case letters, digits, '.', '_' or '-' (at most 63)");
    int priority = s.priority() == null ? 0 : s.priority();
    check(
        Math.abs((long) priority) <= 1_000_000,
        prefix + "priority",
        "priority must be between -1000000 and 1000000, got " + priority,
        null);
    String model = s.gpuModel() == null ? "" : s.gpuModel();
    check(
        model.length() <= 64 && model.indexOf('\0') < 0,
        prefix + "gpuModel",
        "gpuModel is too long",
        "give a model name as `kairos nodes` shows it, e.g. H100");
    String user = who.user();
    if (s.user() != null && !s.user().equals(who.user())) {
      if (!who.isAdmin()) {
        throw ApiError.forbidden(
            "only an admin may submit for another user ('" + clip(s.user()) + "')");
      }
      check(
          USER.matcher(s.user()).matches(),
          prefix + "user",
          "user '" + clip(s.user()) + "' is not a valid user name",
          null);
      user = s.user();
    }
    String name = s.name() == null ? defaultName(command) : s.name();
    check(
        !name.isBlank() && name.length() <= 128 && name.chars().noneMatch(Character::isISOControl),
        prefix + "name",
        "name must be 1 to 128 printable characters",
        null);
    JobArray array = s.array() == null ? null : array(s.array(), prefix + "array");
    Dependency dependency =
        s.dependency() == null ? null : dependency(s.dependency(), prefix + "dependency");
    String output = outputPattern(s.output(), prefix + "output");
    String error = outputPattern(s.error(), prefix + "error");
    String killSignal =
        s.killSignal() == null
            ? JobRequest.DEFAULT_KILL_SIGNAL
            : signal(s.killSignal(), prefix + "killSignal");
    long grace =
        s.gracePeriod() == null
            ? JobRequest.DEFAULT_GRACE_SEC
            : duration(s.gracePeriod(), prefix + "gracePeriod");
    check(
        grace >= 1 && grace <= MAX_GRACE_SEC,
        prefix + "gracePeriod",
        "gracePeriod must be between 1 second and 1 hour, got " + grace + "s",
        "give the time the job needs to write a checkpoint, e.g. \"2m\"");
    String warnSignal = null;
    long warnBefore = 0;
    if (s.warnSignal() != null) {
      String w = s.warnSignal().trim();
      int at = w.indexOf('@');
      warnSignal = signal(at < 0 ? w : w.substring(0, at), prefix + "warnSignal");
      warnBefore =
          at < 0 ? DEFAULT_WARN_BEFORE_SEC : duration(w.substring(at + 1), prefix + "warnSignal");
      check(
          warnBefore >= 1 && warnBefore < timeLimit,
          prefix + "warnSignal",
          "the warning must come between 1 second and the time limit ("
              + timeLimit
              + "s) before the limit, got "
              + warnBefore
              + "s",
          "write SIGNAL@SECONDS, e.g. \"USR1@120\"");
    }
    String checkpointDir = s.checkpointDir() == null ? "" : s.checkpointDir();
    String badLocation = CheckpointLocation.problem(checkpointDir);
    check(
        badLocation == null,
        prefix + "checkpointDir",
        "checkpointDir " + badLocation + ", got '" + clip(checkpointDir) + "'",
        "give an absolute path on shared storage (/ckpt/run1) or an object-storage location"
            + " (s3://bucket/run1)");
    int maxRestarts = s.maxRestarts() == null ? 0 : s.maxRestarts();
    check(
        maxRestarts >= 0 && maxRestarts <= MAX_RESTARTS,
        prefix + "maxRestarts",
        "maxRestarts must be between 0 and " + MAX_RESTARTS + ", got " + maxRestarts,
        "give how often a failed task may restart the job, 0 to " + MAX_RESTARTS);
    List<String> exclude = s.excludeNodes() == null ? List.of() : s.excludeNodes();
    check(
        exclude.size() <= 4096,
        prefix + "excludeNodes",
        "at most 4096 nodes may be excluded, got " + exclude.size(),
        "exclude fewer nodes, or drain the nodes no job should use");
    for (int i = 0; i < exclude.size(); i++) {
      String n = exclude.get(i);
      check(
          n != null && NODE.matcher(n).matches(),
          prefix + "excludeNodes[" + i + "]",
          "'" + (n == null ? "null" : clip(n)) + "' is not a node name",
          "name nodes as `kairos nodes` lists them");
    }
    String account = s.account() == null ? "" : s.account();
    check(
        account.isEmpty() || ACCOUNT.matcher(account).matches(),
        prefix + "account",
        "account '" + clip(account) + "' is not a valid account name",
        "use letters, digits, '.', '_', '@' or '-' (at most 64)");
    String priorityClass = s.priorityClass() == null ? "" : s.priorityClass();
    check(
        priorityClass.isEmpty() || ACCOUNT.matcher(priorityClass).matches(),
        prefix + "priorityClass",
        "priorityClass '" + clip(priorityClass) + "' is not a valid class name",
        "use letters, digits, '.', '_', '@' or '-' (at most 64)");
    var request =
        new JobRequest(
            name,
            command,
            env,
            workdir,
            gpus,
            perNode,
            cpus,
            memoryMb,
            timeLimit,
            queue,
            priority,
            model,
            user,
            killSignal,
            grace,
            warnSignal,
            warnBefore,
            checkpointDir,
            maxRestarts,
            exclude,
            array,
            dependency,
            output,
            error,
            account,
            priorityClass,
            null,
            TaskOptions.layout(
                s,
                perNode == 0 ? (s.nodes() == null ? 1 : Math.max(1, s.nodes())) : gpus / perNode,
                perNode == 0 ? gpus : perNode,
                prefix),
            s.script(),
            s.nodes() == null || s.nodes() <= 1 ? 0 : s.nodes(),
            CheckpointSubmissions.policy(s.checkpoint(), prefix),
            maxGpus);
    return tenancy == null ? withoutTenancy(request, prefix) : resolve(request, tenancy, prefix);
  }

  private static final Pattern ACCOUNT = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._@-]{0,63}");

  private static JobRequest withoutTenancy(JobRequest request, String prefix) {
    check(
        request.priorityClass().isEmpty(),
        prefix + "priorityClass",
        "priority class '"
            + request.priorityClass()
            + "' is unknown: this controller has no"
            + " tenancy configuration",
        "leave priorityClass out (use priority), or start the controller with --tenancy FILE");
    return request;
  }

  /**
   * The core's resolution ({@link Tenants#resolve}): queue and class must exist; the account is the
   * job's own, else the queue's default, else the user. An account the job names must be in the
   * account tree when there is one (a default account is checked when the file is read; a user's
   * name as account is charged to nobody's share).
   */
  private static JobRequest resolve(JobRequest request, Tenancy tenancy, String prefix) {
    JobSpec resolved;
    try {
      resolved = Tenants.resolve(ControlState.spec(request, List.of()), tenancy.config());
    } catch (IllegalArgumentException e) {
      String message = e.getMessage() == null ? "invalid" : e.getMessage();
      int colon = message.indexOf(": ");
      String field = colon > 0 ? message.substring(0, colon) : "queue";
      String detail = colon > 0 ? message.substring(colon + 2) : message;
      String fix = null;
      int fixAt = detail.indexOf(" (fix: ");
      if (fixAt >= 0 && detail.endsWith(")")) {
        fix = detail.substring(fixAt + 7, detail.length() - 1);
        detail = detail.substring(0, fixAt);
      }
      throw ApiError.invalid(prefix + field, detail, fix);
    }
    if (!request.account().isEmpty() && tenancy.hasAccounts()) {
      var tree = tenancy.accounts();
      check(
          tree.contains(request.account()),
          prefix + "account",
          "unknown account '" + clip(request.account()) + "'",
          "use one of " + accountNames(tree) + ", or leave it out for the queue's default");
    }
    return request.withTenancy(resolved.account(), resolved.priorityClass(), resolved.priority());
  }

  private static List<String> accountNames(io.kairos.core.fairshare.AccountTree tree) {
    var names = new java.util.ArrayList<String>();
    for (int id = 0; id < tree.size() && names.size() < 20; id++) {
      names.add(tree.name(id));
    }
    return names;
  }

  static final int MAX_ARRAY_CHARS = 65_536;
  static final int MAX_DEPENDENCY_CHARS = 16_384;

  private static JobArray array(String text, String field) {
    String fix =
        "write the indexes as Slurm's --array: \"0-15\", \"1,3,5-7\", \"0-20:2\" (every"
            + " 2nd), with \"%4\" at the end to run at most 4 at once; at most "
            + JobArray.MAX_ELEMENTS
            + " elements, indexes 0 to "
            + JobArray.MAX_TASK_ID;
    check(
        text.length() <= MAX_ARRAY_CHARS,
        field,
        "array is longer than " + MAX_ARRAY_CHARS + " characters",
        fix);
    try {
      return JobArray.parse(text);
    } catch (IllegalArgumentException e) {
      throw ApiError.invalid(
          field, "array '" + clip(text) + "' is not valid: " + e.getMessage(), fix);
    }
  }

  private static Dependency dependency(String text, String field) {
    String fix =
        "write Slurm's --dependency: \"afterok:12:13\", \"afterany:14\","
            + " \"afternotok:15\" or \"after:16\", joined by ',' (all must hold) or '?' (any)";
    check(
        text.length() <= MAX_DEPENDENCY_CHARS,
        field,
        "dependency is longer than " + MAX_DEPENDENCY_CHARS + " characters",
        fix);
    try {
      return Dependency.parse(text);
    } catch (IllegalArgumentException e) {
      throw ApiError.invalid(
          field, "dependency '" + clip(text) + "' is not valid: " + e.getMessage(), fix);
    }
  }

  /**
   * Refuses a dependency on a job that does not exist. {@code exists} reads the state; the state
   * machine, which decides when the dependency holds, reads it again.
   */
  public static void checkDependencyJobs(
      JobRequest request, java.util.function.LongPredicate exists, String prefix) {
    if (request.dependency() == null) {
      return;
    }
    for (long id : request.dependency().jobs()) {
      check(
          exists.test(id),
          prefix + "dependency",
          "job " + id + " does not exist",
          "name jobs submitted before this one, by the ids `kairos queue` shows");
    }
  }

  /** The letters Slurm's filename patterns may use after a '%'. */
  private static final String PATTERN_LETTERS = "jAatNux%";

  /**
   * An output or error path: absolute, with Slurm's patterns (%j %A %a %t %N %u %x %%) only; "" for
   * none.
   */
  private static String outputPattern(String text, String field) {
    if (text == null || text.isEmpty()) {
      return "";
    }
    check(
        text.startsWith("/") && text.length() <= 4096 && text.indexOf('\0') < 0,
        field,
        field.substring(field.lastIndexOf('.') + 1)
            + " must be an absolute path, got '"
            + clip(text)
            + "'",
        "give an absolute path such as /home/me/logs/%j-%t.out");
    for (int i = 0; i < text.length(); i++) {
      if (text.charAt(i) != '%') {
        continue;
      }
      boolean known = i + 1 < text.length() && PATTERN_LETTERS.indexOf(text.charAt(i + 1)) >= 0;
      check(
          known,
          field,
          "'"
              + (i + 1 < text.length() ? text.substring(i, i + 2) : "%")
              + "' in '"
              + clip(text)
              + "' is not a pattern Kairos knows",
          "use %j (job id), %A and %a (array job and index), %t (task rank), %N (node),"
              + " %u (user), %x (job name), or %% for a '%'");
      i++;
    }
    return text;
  }

  /** The signals a job may ask for, by name without "SIG". */
  public static final List<String> SIGNALS = io.kairos.protocol.JobSignals.NAMES;

  static String signal(String text, String field) {
    String name = text.trim().toUpperCase(java.util.Locale.ROOT);
    name = name.startsWith("SIG") ? name.substring(3) : name;
    check(
        SIGNALS.contains(name),
        field,
        "'" + clip(text) + "' is not a signal a job may ask for",
        "use one of " + String.join(", ", SIGNALS));
    return name;
  }

  static long duration(String text, String field) {
    try {
      return timeLimit(text, "");
    } catch (ApiError e) {
      throw ApiError.invalid(
          field,
          "'" + clip(text) + "' is not a duration",
          "write seconds (\"30\"), \"90s\", \"2m\" or \"H:MM:SS\"");
    }
  }

  private static List<String> command(List<String> command, String prefix) {
    check(
        command != null && !command.isEmpty(),
        prefix + "command",
        "command is required",
        "give the program and its arguments, e.g. [\"python3\", \"train.py\"]");
    check(
        command.size() <= MAX_ARGS,
        prefix + "command",
        "command has " + command.size() + " arguments, at most " + MAX_ARGS,
        null);
    for (int i = 0; i < command.size(); i++) {
      String arg = command.get(i);
      check(
          arg != null, prefix + "command[" + i + "]", "arguments must be strings, not null", null);
      check(
          arg.length() <= MAX_ARG_CHARS && arg.indexOf('\0') < 0,
          prefix + "command[" + i + "]",
          "argument is longer than " + MAX_ARG_CHARS + " characters or contains NUL",
          null);
    }
    check(
        !command.get(0).isBlank(),
        prefix + "command[0]",
        "the program must not be blank",
        "name the program to run");
    return command;
  }

  private static Map<String, String> env(Map<String, String> env, String prefix) {
    if (env == null) {
      return Map.of();
    }
    check(env.size() <= MAX_ENV, prefix + "env", "env has more than " + MAX_ENV + " entries", null);
    var out = new TreeMap<String, String>();
    for (var e : env.entrySet()) {
      check(
          ENV_NAME.matcher(e.getKey()).matches(),
          prefix + "env." + clip(e.getKey()),
          "'" + clip(e.getKey()) + "' is not a valid environment variable name",
          "use letters, digits and '_', not starting with a digit");
      check(
          e.getValue() != null
              && e.getValue().length() <= MAX_ENV_VALUE_CHARS
              && e.getValue().indexOf('\0') < 0,
          prefix + "env." + e.getKey(),
          "value must be a string under 32 KiB without NUL",
          null);
      out.put(e.getKey(), e.getValue());
    }
    return out;
  }

  /** Seconds from "3600", "90s", "30m", "2h", "1d", "1:30:00", "2-00:00:00" (Slurm's forms). */
  public static long timeLimit(String text, String prefix) {
    String t = text.trim();
    long seconds = -1;
    var m = TIME.matcher(t);
    if (m.matches()) {
      long n = Long.parseLong(m.group(1));
      seconds =
          switch (m.group(2)) {
            case "m" -> n * 60;
            case "h" -> n * 3600;
            case "d" -> n * 86400;
            default -> n;
          };
    } else {
      var c = CLOCK.matcher(t);
      if (c.matches()) {
        long days = c.group(1) == null ? 0 : Long.parseLong(c.group(1));
        long a = Long.parseLong(c.group(2));
        long b = Long.parseLong(c.group(3));
        seconds =
            c.group(4) == null
                ? days * 86400 + a * 60 + b
                : days * 86400 + a * 3600 + b * 60 + Long.parseLong(c.group(4));
      }
    }
    check(
        seconds >= 0,
        prefix + "timeLimit",
        "timeLimit '" + clip(text) + "' is not a duration",
        "write seconds (\"3600\"), \"90s\", \"30m\", \"2h\", \"1d\" or \"H:MM:SS\"");
    check(
        seconds >= 1 && seconds <= MAX_TIME_LIMIT_SEC,
        prefix + "timeLimit",
        "timeLimit must be between 1 second and 365 days, got " + seconds + "s",
        null);
    return seconds;
  }

  private static String defaultName(List<String> command) {
    String first = command.get(0);
    int slash = first.lastIndexOf('/');
    String base = slash >= 0 ? first.substring(slash + 1) : first;
    base = base.chars().anyMatch(Character::isISOControl) || base.isBlank() ? "job" : base;
    return base.length() > 128 ? base.substring(0, 128) : base;
  }

  static void check(boolean ok, String field, String detail, String fix) {
    if (!ok) {
      throw ApiError.invalid(field, detail, fix);
    }
  }

  static String clip(String s) {
    return s.length() > 64 ? s.substring(0, 64) + "..." : s;
  }
}

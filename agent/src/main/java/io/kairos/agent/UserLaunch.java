package io.kairos.agent;

import io.kairos.agent.account.Account;
import io.kairos.agent.account.Setpriv;
import io.kairos.agent.account.TaskOwners;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A task started as its owner, who opens its own files: the kernel, not the agent, decides what the
 * task may write, where it may run, and which output it may have.
 *
 * <p>The argv is {@code [setpriv --reuid=U --regid=G --groups=... --] /bin/sh -c SCRIPT kairos-task
 * HOME USER STDOUT STDERR WORKDIR BATCH_SCRIPT ARGV...}: {@link Setpriv} drops to the account (left
 * out when the agent already runs as it), then a constant script, as the owner, sets {@code umask
 * 077}, enters the working directory, writes a batch step's script from its stdin to BATCH_SCRIPT
 * (mode 0700, in the task directory) when there is one, creates the output files' directories and
 * opens stdout and stderr (appending, as Slurm does), and {@code exec}s the task's argv (same pid
 * throughout). The script never contains user text: paths and argv are separate arguments read as
 * {@code "$N"} and {@code "$@"}. When a cgroup is used, its joining wrapper ({@link
 * io.kairos.agent.isolate.Cgroups#wrap}) runs first, as root, and {@code exec}s this argv.
 *
 * <p>Until the task's argv runs, the script's stderr (and that of setpriv and the cgroup wrapper)
 * is a file of the agent's ({@code DATA/run/KEY/N.setup}, see {@link Supervisor}), which the agent
 * reads once it ends: a task that fails before it starts (the owner may not enter the working
 * directory or open an output file, the program does not exist) exits {@link #SETUP_FAILED_EXIT} or
 * 127 with one {@code kairos: } line there, which becomes the task's failure message.
 *
 * <p>A step's process ({@link LaunchSpec#spooled}) keeps the agent's pipes as its stdout and stderr
 * ({@link #STEP_SCRIPT}: no files to open), so what goes wrong before its program runs reaches srun
 * as the task's stderr, as slurmstepd's errors do; a program that does not exist exits 2, as
 * Slurm's failed {@code execve()} does.
 */
final class UserLaunch {
  /** The exit status of a task whose owner could not enter its directory or open its output. */
  static final int SETUP_FAILED_EXIT = 126;

  /**
   * Arguments: HOME USER STDOUT STDERR WORKDIR BATCH_SCRIPT (empty for none), then the task's argv.
   * Never holds user text: a batch script's text comes on stdin.
   */
  static final String SCRIPT =
      """
      umask 077
      exec 3>&2
      home=$1 user=$2 out=$3 err=$4 dir=$5 script=$6
      shift 6
      if ! cd "$dir" 2>/dev/null; then
        echo "kairos: $user cannot enter the working directory $dir" >&3; exit 126
      fi
      if [ -n "$script" ]; then
        if ! PATH=/usr/bin:/bin cat >"$script" 2>/dev/null \\
            || ! PATH=/usr/bin:/bin chmod 700 "$script" 2>/dev/null; then
          echo "kairos: $user cannot write the batch script $script" >&3; exit 126
        fi
        exec </dev/null
      fi
      for f in "$out" "$err"; do
        d=${f%/*}
        if [ -n "$d" ] && [ ! -d "$d" ] && ! PATH=/usr/bin:/bin mkdir -p -- "$d" 2>/dev/null; then
          echo "kairos: $user cannot create the directory $d" >&3; exit 126
        fi
        if ! true 2>/dev/null >>"$f"; then
          echo "kairos: $user cannot open $f for writing" >&3; exit 126
        fi
      done
      exec >>"$out"
      if [ "$err" = "$out" ]; then exec 2>&1; else exec 2>>"$err"; fi
      if ! command -v "$1" >/dev/null 2>&1; then
        echo "kairos: $1: no such program (for $user)" >&3; exit 127
      fi
      exec 3>&-
      exec "$@"
      """;

  /** Arguments: HOME USER WORKDIR, then the step task's argv. Never holds user text. */
  static final String STEP_SCRIPT =
      """
      umask 077
      home=$1 user=$2 dir=$3
      shift 3
      if ! cd "$dir" 2>/dev/null; then
        echo "kairos: error: $user cannot enter the working directory $dir" >&2; exit 126
      fi
      if ! command -v "$1" >/dev/null 2>&1; then
        echo "kairos: error: execve(): $1: No such file or directory" >&2; exit 2
      fi
      exec "$@"
      """;

  private UserLaunch() {}

  /** The agent's own uid: a task of the same account needs no setpriv. */
  private static final class Agent {
    static final int UID = TaskOwners.thisProcess().uid();
  }

  /**
   * {@code spec} started as {@code owner}, from this agent: see {@link #wrap(LaunchSpec, Account,
   * int, Map)}.
   */
  static LaunchSpec wrap(LaunchSpec spec, Account owner, Map<String, String> jobEnv) {
    return wrap(spec, owner, Agent.UID, jobEnv);
  }

  /**
   * {@code spec} started as {@code owner}: the argv above, and the environment with {@code HOME},
   * {@code USER} and {@code LOGNAME} of the owner unless the job set them itself.
   *
   * @param agentUid the agent's own uid: no setpriv when the owner is the agent
   * @param jobEnv the job's own environment (what it set wins over the account's)
   * @throws IllegalArgumentException when the program starts with '-' (the shell's exec would read
   *     it as an option)
   */
  static LaunchSpec wrap(LaunchSpec spec, Account owner, int agentUid, Map<String, String> jobEnv) {
    List<String> argv = spec.argv();
    if (argv.isEmpty() || argv.getFirst().startsWith("-")) {
      throw new IllegalArgumentException("program must be named and not start with '-': " + argv);
    }
    var wrapped = new ArrayList<String>();
    if (owner.uid() != agentUid) {
      wrapped.addAll(Setpriv.as(owner));
    }
    wrapped.addAll(
        spec.spooled()
            ? List.of(
                "/bin/sh",
                "-c",
                STEP_SCRIPT,
                "kairos-step",
                owner.home(),
                owner.name(),
                spec.workdir().toString())
            : List.of(
                "/bin/sh",
                "-c",
                SCRIPT,
                "kairos-task",
                owner.home(),
                owner.name(),
                spec.stdout().toString(),
                spec.stderr().toString(),
                spec.workdir().toString(),
                spec.scriptFile() == null ? "" : spec.scriptFile().toString()));
    wrapped.addAll(argv);
    var env = new TreeMap<>(spec.env());
    Map<String, String> own = jobEnv == null ? Map.of() : jobEnv;
    for (var e :
        Map.of("HOME", owner.home(), "USER", owner.name(), "LOGNAME", owner.name()).entrySet()) {
      if (!own.containsKey(e.getKey())) {
        env.put(e.getKey(), e.getValue());
      }
    }
    return spec.withOwner(owner, wrapped, env);
  }
}

package io.kairos.cli;

import java.util.List;

/**
 * sbatch's long option names, for its unambiguous prefixes ({@code --out=} is {@code --output=}):
 * {@link SbatchOptions} reads {@code #SBATCH} lines and sbatch's command line with them.
 */
final class SbatchLongOptions {
  private SbatchLongOptions() {}

  /**
   * Every long option of sbatch 22.05, hidden ones included: sbatch takes any unambiguous prefix of
   * one ({@code --out=} is {@code --output=}), and so does Kairos. Read from Slurm's own answers to
   * {@code sbatch --LETTER=1}.
   */
  static final List<String> NAMES =
      List.of(
          "account",
          "acctg-freq",
          "array",
          "batch",
          "bb",
          "bbf",
          "begin",
          "chdir",
          "cluster",
          "cluster-constraint",
          "clusters",
          "comment",
          "constraint",
          "container",
          "context",
          "contiguous",
          "core-spec",
          "cores-per-socket",
          "cpu-freq",
          "cpus-per-gpu",
          "cpus-per-task",
          "deadline",
          "delay-boot",
          "dependency",
          "distribution",
          "error",
          "exclude",
          "exclusive",
          "export",
          "export-file",
          "extra-node-info",
          "get-user-env",
          "gid",
          "gpu-bind",
          "gpu-freq",
          "gpus",
          "gpus-per-node",
          "gpus-per-socket",
          "gpus-per-task",
          "gres",
          "gres-flags",
          "help",
          "hint",
          "hold",
          "ignore-pbs",
          "input",
          "job-name",
          "kill-on-invalid-dep",
          "licenses",
          "mail-type",
          "mail-user",
          "mcs-label",
          "mem",
          "mem-bind",
          "mem-per-cpu",
          "mem-per-gpu",
          "mincpus",
          "network",
          "nice",
          "no-kill",
          "no-requeue",
          "nodefile",
          "nodelist",
          "nodes",
          "ntasks",
          "ntasks-per-core",
          "ntasks-per-gpu",
          "ntasks-per-node",
          "ntasks-per-socket",
          "ntasks-per-tres",
          "open-mode",
          "output",
          "overcommit",
          "oversubscribe",
          "parsable",
          "partition",
          "power",
          "prefer",
          "priority",
          "profile",
          "propagate",
          "qos",
          "quiet",
          "reboot",
          "requeue",
          "reservation",
          "signal",
          "sockets-per-node",
          "spread-job",
          "switches",
          "tasks-per-node",
          "test-only",
          "thread-spec",
          "threads-per-core",
          "time",
          "time-min",
          "tmp",
          "uid",
          "usage",
          "use-min-nodes",
          "verbose",
          "version",
          "wait",
          "wait-all-nodes",
          "wckey",
          "wrap");

  /**
   * The long option a name or prefix means on sbatch's command line: itself, or the one option it
   * is an unambiguous prefix of; the name as given when it is unknown or ambiguous (then {@link
   * SbatchOptions#apply} says so).
   */
  static String resolve(String key) {
    if (NAMES.contains(key)) {
      return key.equals("tasks-per-node") ? "ntasks-per-node" : key;
    }
    List<String> matches = NAMES.stream().filter(o -> o.startsWith(key)).toList();
    return matches.size() == 1 ? resolve(matches.getFirst()) : key;
  }
}

package io.kairos.cli.slurm;

import io.kairos.protocol.slurm.HostList;
import java.io.IOException;
import java.io.PrintStream;
import java.util.List;
import java.util.Map;

/**
 * Kairos' {@code scontrol}, the part batch scripts use: {@code show hostnames [LIST]} (default
 * {@code $SLURM_JOB_NODELIST}) prints one host per line, expanding both comma-separated lists and
 * Slurm's compressed form ({@code gpu[001-004]}, {@code a[1-2,5],b3}); {@code show hostlist LIST}
 * compresses one; {@code show job [ID]} prints a job as {@code Key=Value} pairs, as scontrol does
 * (a few of them). Keywords may be abbreviated as scontrol allows ({@code sh}, {@code host...}).
 */
final class Scontrol {
  private final Map<String, String> env;
  private final PrintStream out;
  private final PrintStream err;

  Scontrol(Map<String, String> env, PrintStream out, PrintStream err) {
    this.env = env;
    this.out = out;
    this.err = err;
  }

  int run(List<String> args) {
    if (args.size() < 2 || !is(args.get(0), "show", 2)) {
      err.println(
          "scontrol: error: Kairos' scontrol knows: show hostnames [LIST], show hostlist LIST,"
              + " show job [ID]");
      return 1;
    }
    String what = args.get(1).toLowerCase(java.util.Locale.ROOT);
    List<String> rest = args.subList(2, args.size());
    try {
      if (is(what, "hostnames", 5)) {
        String list = rest.isEmpty() ? env.get("SLURM_JOB_NODELIST") : String.join(",", rest);
        if (list == null) {
          err.println("scontrol: error: no host list given and SLURM_JOB_NODELIST is not set");
          return 1;
        }
        HostList.expand(list).forEach(out::println);
        return 0;
      }
      if (is(what, "hostlist", 5) || is(what, "hostlistsorted", 9)) {
        if (rest.isEmpty()) {
          err.println("scontrol: error: give a host list");
          return 1;
        }
        var hosts = new java.util.ArrayList<>(HostList.expand(String.join(",", rest)));
        if (is(what, "hostlistsorted", 9)) {
          hosts.sort(null);
        }
        out.println(HostList.compress(hosts));
        return 0;
      }
      if (is(what, "job", 3)) {
        return job(rest.isEmpty() ? env.get("SLURM_JOB_ID") : rest.getFirst());
      }
    } catch (IllegalArgumentException e) {
      err.println("scontrol: error: " + e.getMessage());
      return 1;
    }
    err.println("scontrol: error: invalid entity: " + args.get(1) + " for keyword: show");
    return 1;
  }

  /** Whether {@code word} is {@code keyword} or a prefix of it at least {@code min} long. */
  private static boolean is(String word, String keyword, int min) {
    String w = word.toLowerCase(java.util.Locale.ROOT);
    return w.length() >= Math.min(min, keyword.length()) && keyword.startsWith(w);
  }

  private int job(String id) {
    if (id == null || !id.strip().matches("\\d{1,18}")) {
      err.println("scontrol: error: Invalid job id specified");
      return 1;
    }
    try {
      var reply = ControllerLink.fromEnvironment(env).get("/api/v1/jobs/" + id.strip());
      if (!reply.ok()) {
        err.println("scontrol: error: " + reply.detail());
        return 1;
      }
      var job = Srun.map(TinyJson.parse(reply.body()));
      var nodes = new java.util.ArrayList<String>();
      for (Object t : Srun.list(job.get("placement"))) {
        Object node = Srun.map(t).get("node");
        if (node != null && !nodes.contains(node.toString())) {
          nodes.add(node.toString());
        }
      }
      out.println(
          "JobId="
              + job.get("id")
              + " JobName="
              + job.get("name")
              + "\n   UserId="
              + job.get("user")
              + " Partition="
              + job.get("queue")
              + "\n   JobState="
              + job.get("state")
              + " Reason="
              + job.getOrDefault("pendingReason", "None")
              + "\n   NodeList="
              + (nodes.isEmpty() ? "(null)" : HostList.compress(nodes))
              + " NumNodes="
              + Math.max(1, nodes.size())
              + " NumTasks="
              + job.get("tasks")
              + "\n   TimeLimit="
              + job.get("timeLimitSec")
              + "s");
      return 0;
    } catch (IOException | IllegalStateException e) {
      err.println("scontrol: error: " + e.getMessage());
      return 1;
    }
  }
}

package io.kairos.cli.slurm;

import io.kairos.protocol.slurm.HostList;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * srun's command line, read as Slurm's srun reads it: options up to the first word that is not one
 * (the command; {@code --} ends them too), long options as {@code --name=value} or {@code --name
 * value} and by any unambiguous prefix, short ones bundled ({@code -lN2}) or apart ({@code -n 4}).
 * What is not given comes from the environment a batch step has, as srun's does: {@code
 * SLURM_NNODES} for {@code -N}, {@code SLURM_NTASKS} (or {@code SLURM_NPROCS}) for {@code -n},
 * {@code SLURM_NTASKS_PER_NODE}, {@code SLURM_CPUS_PER_TASK} and {@code SLURM_GPUS_PER_TASK}.
 *
 * <p>Slurm options that Kairos takes but does not act on are accepted with a note (see {@link
 * #notes}); an option srun does not know is an error, as in srun.
 */
final class SrunOptions {
  /** A known option: its long name, short letter (or 0) and whether it takes a value. */
  private record Spec(String name, char letter, boolean takesValue, String note) {}

  /** Acted on. */
  private static final List<Spec> USED =
      List.of(
          new Spec("ntasks", 'n', true, null),
          new Spec("nodes", 'N', true, null),
          new Spec("ntasks-per-node", (char) 0, true, null),
          new Spec("nodelist", 'w', true, null),
          new Spec("exclude", 'x', true, null),
          new Spec("gpus-per-task", (char) 0, true, null),
          new Spec("cpus-per-task", 'c', true, null),
          new Spec("export", (char) 0, true, null),
          new Spec("label", 'l', false, null),
          new Spec("chdir", 'D', true, null),
          new Spec("jobid", (char) 0, true, null),
          new Spec("help", 'h', false, null),
          new Spec("usage", (char) 0, false, null),
          new Spec("version", 'V', false, null));

  private static final String NOT_ENFORCED = "accepted; Kairos does not enforce it for steps";
  private static final String IGNORED = "not supported by Kairos' srun; ignored";

  /** Taken without effect (a note says so, except for what changes nothing here). */
  private static final List<Spec> NOTED =
      List.of(
          new Spec("unbuffered", 'u', false, null),
          new Spec("verbose", 'v', false, null),
          new Spec("quiet", 'Q', false, null),
          new Spec("exact", (char) 0, false, null),
          new Spec("overlap", (char) 0, false, null),
          new Spec("exclusive", (char) 0, false, null),
          new Spec("disable-status", 'X', false, null),
          new Spec("no-kill", 'k', false, null),
          new Spec("kill-on-bad-exit", 'K', false, IGNORED),
          new Spec("preserve-env", 'E', false, null),
          new Spec("oversubscribe", 's', false, null),
          new Spec("overcommit", 'O', false, null),
          new Spec("pty", (char) 0, false, IGNORED),
          new Spec("job-name", 'J', true, null),
          new Spec("time", 't', true, NOT_ENFORCED),
          new Spec("mem", (char) 0, true, NOT_ENFORCED),
          new Spec("mem-per-cpu", (char) 0, true, NOT_ENFORCED),
          new Spec("mem-per-gpu", (char) 0, true, NOT_ENFORCED),
          new Spec("gres", (char) 0, true, "every task sees the job's GPUs on its node"),
          new Spec("gpus", 'G', true, "every task sees the job's GPUs on its node"),
          new Spec("gpus-per-node", (char) 0, true, "every task sees the job's GPUs on its node"),
          new Spec("partition", 'p', true, null),
          new Spec("account", 'A', true, null),
          new Spec("qos", 'q', true, null),
          new Spec("mpi", (char) 0, true, null),
          new Spec("cpu-bind", (char) 0, true, null),
          new Spec("distribution", 'm', true, IGNORED + " (the distribution is block)"),
          new Spec("constraint", 'C', true, null),
          new Spec("network", (char) 0, true, null),
          new Spec("output", 'o', true, IGNORED + " (output goes to srun's stdout)"),
          new Spec("error", 'e', true, IGNORED + " (errors go to srun's stderr)"),
          new Spec("input", 'i', true, IGNORED),
          new Spec("wait", 'W', true, IGNORED),
          new Spec("signal", (char) 0, true, IGNORED));

  Integer nodes;
  Integer ntasks;

  /** {@code ntasks} came from SLURM_NTASKS (or SLURM_NPROCS), not from {@code -n}. */
  boolean ntasksFromEnv;

  Integer ntasksPerNode;
  Integer gpusPerTask;
  Integer cpusPerTask;
  List<String> nodelist = List.of();
  List<String> exclude = List.of();
  String export = "ALL";
  boolean label;
  String chdir;
  Long jobId;
  boolean help;
  boolean version;
  List<String> command = List.of();

  /** What srun says about the options it took without effect: "srun: ..." lines. */
  final List<String> notes = new ArrayList<>();

  /**
   * The options of {@code args}, with defaults from {@code env}.
   *
   * @throws IllegalArgumentException with srun's words for a bad option
   */
  static SrunOptions parse(List<String> args, Map<String, String> env) {
    var o = new SrunOptions();
    int i = 0;
    while (i < args.size()) {
      String word = args.get(i);
      if (word.equals("--")) {
        i++;
        break;
      }
      if (word.startsWith("--") && word.length() > 2) {
        int eq = word.indexOf('=');
        String name = eq < 0 ? word.substring(2) : word.substring(2, eq);
        Spec spec = byName(name);
        String value = eq < 0 ? null : word.substring(eq + 1);
        if (spec.takesValue() && value == null) {
          if (i + 1 >= args.size()) {
            throw new IllegalArgumentException(
                "option '--" + spec.name() + "' requires an argument");
          }
          value = args.get(++i);
        } else if (!spec.takesValue() && value != null) {
          throw new IllegalArgumentException(
              "option '--" + spec.name() + "' doesn't allow an argument");
        }
        o.set(spec, value);
        i++;
      } else if (word.startsWith("-") && word.length() > 1) {
        for (int k = 1; k < word.length(); k++) {
          Spec spec = byLetter(word.charAt(k));
          if (!spec.takesValue()) {
            o.set(spec, null);
            continue;
          }
          String value = word.substring(k + 1);
          if (value.isEmpty()) {
            if (i + 1 >= args.size()) {
              throw new IllegalArgumentException(
                  "option requires an argument -- '" + word.charAt(k) + "'");
            }
            value = args.get(++i);
          }
          o.set(spec, value);
          break;
        }
        i++;
      } else {
        break;
      }
    }
    o.command = List.copyOf(args.subList(i, args.size()));
    o.defaults(env);
    return o;
  }

  private static Spec byName(String name) {
    Spec exact = null;
    var prefixed = new ArrayList<Spec>();
    for (List<Spec> specs : List.of(USED, NOTED)) {
      for (Spec s : specs) {
        if (s.name().equals(name)) {
          exact = s;
        } else if (s.name().startsWith(name)) {
          prefixed.add(s);
        }
      }
    }
    if (exact != null) {
      return exact;
    }
    if (prefixed.size() == 1) {
      return prefixed.getFirst();
    }
    throw new IllegalArgumentException(
        prefixed.isEmpty()
            ? "unrecognized option '--" + name + "'"
            : "option '--" + name + "' is ambiguous");
  }

  private static Spec byLetter(char letter) {
    for (List<Spec> specs : List.of(USED, NOTED)) {
      for (Spec s : specs) {
        if (s.letter() == letter) {
          return s;
        }
      }
    }
    throw new IllegalArgumentException("invalid option -- '" + letter + "'");
  }

  private void set(Spec spec, String value) {
    switch (spec.name()) {
      case "ntasks" -> ntasks = count(value, "--ntasks");
      case "nodes" -> nodes = nodeCount(value);
      case "ntasks-per-node" -> ntasksPerNode = count(value, "--ntasks-per-node");
      case "nodelist" -> nodelist = hosts(value, "--nodelist");
      case "exclude" -> exclude = hosts(value, "--exclude");
      case "gpus-per-task" -> {
        int colon = value.lastIndexOf(':');
        gpusPerTask = count(value.substring(colon + 1), "--gpus-per-task");
      }
      case "cpus-per-task" -> cpusPerTask = count(value, "--cpus-per-task");
      case "export" -> export = value;
      case "label" -> label = true;
      case "chdir" -> chdir = value;
      case "jobid" -> {
        try {
          jobId = Long.parseLong(value.strip());
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException("Invalid job id: " + value);
        }
      }
      case "help", "usage" -> help = true;
      case "version" -> version = true;
      default -> {
        if (spec.note() != null) {
          notes.add("Warning: --" + spec.name() + " is " + spec.note());
        }
      }
    }
  }

  private void defaults(Map<String, String> env) {
    if (nodes == null) {
      nodes = envCount(env, "SLURM_NNODES");
    }
    if (ntasks == null) {
      ntasks = envCount(env, "SLURM_NTASKS");
      if (ntasks == null) {
        ntasks = envCount(env, "SLURM_NPROCS");
      }
      ntasksFromEnv = ntasks != null;
    }
    if (ntasksPerNode == null) {
      ntasksPerNode = envCount(env, "SLURM_NTASKS_PER_NODE");
    }
    if (cpusPerTask == null) {
      cpusPerTask = envCount(env, "SLURM_CPUS_PER_TASK");
    }
    if (gpusPerTask == null) {
      gpusPerTask = envCount(env, "SLURM_GPUS_PER_TASK");
    }
  }

  /** A positive count from the environment; null when unset or not one. */
  private static Integer envCount(Map<String, String> env, String name) {
    String v = env.get(name);
    if (v == null || !v.strip().matches("\\d{1,7}") || Integer.parseInt(v.strip()) < 1) {
      return null;
    }
    return Integer.parseInt(v.strip());
  }

  private static int count(String value, String option) {
    String v = value.strip();
    if (!v.matches("\\d{1,7}") || Integer.parseInt(v) < 1) {
      throw new IllegalArgumentException("Invalid numeric value \"" + value + "\" for " + option);
    }
    return Integer.parseInt(v);
  }

  /** {@code -N 2}, or a range {@code 2-4}: its minimum, which is what a step gets. */
  private static int nodeCount(String value) {
    String v = value.strip();
    int dash = v.indexOf('-');
    return count(dash > 0 ? v.substring(0, dash) : v, "--nodes");
  }

  /** A host list, or the name of a file holding one (a value with a '/', as srun reads it). */
  private static List<String> hosts(String value, String option) {
    String list = value;
    if (value.contains("/")) {
      try {
        list = String.join(",", Files.readAllLines(Path.of(value)));
      } catch (IOException e) {
        throw new IllegalArgumentException(
            option + ": cannot read the node list file " + value + ": " + e.getMessage());
      }
    }
    return HostList.expand(list);
  }

  /**
   * The tasks' environment by {@code --export}: ALL (the default) is srun's own; NONE only Slurm's
   * {@code SLURM_*} variables; a list ({@code [ALL,]NAME[=VALUE],...}) those named (with a value,
   * set to it) plus {@code SLURM_*}, or all of srun's with ALL first. Kairos' own credentials are
   * never forwarded (the agent hands the job's step credential to every task itself).
   */
  Map<String, String> environment(Map<String, String> env) {
    var out = new TreeMap<String, String>();
    String e = export.strip();
    boolean all =
        e.equalsIgnoreCase("ALL") || e.toUpperCase(java.util.Locale.ROOT).startsWith("ALL,");
    if (all) {
      out.putAll(env);
    } else {
      env.forEach(
          (k, v) -> {
            if (k.startsWith("SLURM_")) {
              out.put(k, v);
            }
          });
    }
    if (!e.equalsIgnoreCase("ALL") && !e.equalsIgnoreCase("NONE")) {
      var named = new LinkedHashMap<String, String>();
      for (String part : e.split(",")) {
        String p = part.strip();
        if (p.isEmpty() || p.equalsIgnoreCase("ALL")) {
          continue;
        }
        int eq = p.indexOf('=');
        if (eq > 0) {
          named.put(p.substring(0, eq), p.substring(eq + 1));
        } else if (env.containsKey(p)) {
          named.put(p, env.get(p));
        }
      }
      out.putAll(named);
    }
    out.remove("KAIROS_JOB_TOKEN");
    out.remove("KAIROS_TOKEN");
    return out;
  }
}

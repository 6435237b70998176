package io.kairos.cli;

import io.kairos.protocol.JobSubmission;
import java.util.List;
import java.util.Set;

/**
 * The {@code #SBATCH} lines of one script, gathered option by option and turned into a partial
 * {@link JobSubmission} by {@link #build}. Later lines win, as in sbatch. Nodes and GPUs are
 * resolved together at the end: {@code -N 2 --gres=gpu:8} is gpus 16, gpusPerNode 8.
 *
 * <p>Not thread-safe; one instance per script.
 */
final class SbatchOptions {
  /** A supported option: its long name, short name (or 0) and whether it takes a value. */
  private record Spec(String name, char letter, boolean takesValue) {}

  private static final List<Spec> SPECS =
      List.of(
          new Spec("job-name", 'J', true),
          new Spec("nodes", 'N', true),
          new Spec("ntasks", 'n', true),
          new Spec("ntasks-per-node", (char) 0, true),
          new Spec("gres", (char) 0, true),
          new Spec("gpus-per-node", (char) 0, true),
          new Spec("gpus-per-task", (char) 0, true),
          new Spec("gpus", 'G', true),
          new Spec("time", 't', true),
          new Spec("partition", 'p', true),
          new Spec("cpus-per-task", 'c', true),
          new Spec("mem", (char) 0, true),
          new Spec("exclude", 'x', true),
          new Spec("signal", (char) 0, true),
          new Spec("array", 'a', true),
          new Spec("dependency", 'd', true),
          new Spec("output", 'o', true),
          new Spec("error", 'e', true),
          new Spec("chdir", 'D', true),
          new Spec("open-mode", (char) 0, true),
          new Spec("requeue", (char) 0, false),
          new Spec("no-requeue", (char) 0, false),
          new Spec("account", 'A', true),
          new Spec("qos", 'q', true),
          new Spec("export", (char) 0, true));

  /** Slurm options that take no value, so the next word is not theirs. */
  private static final Set<String> FLAGS =
      Set.of(
          "exclusive",
          "hold",
          "H",
          "overcommit",
          "O",
          "contiguous",
          "quiet",
          "Q",
          "verbose",
          "v",
          "wait",
          "W",
          "no-kill",
          "k",
          "oversubscribe",
          "s",
          "spread-job",
          "use-min-nodes",
          "parsable",
          "test-only",
          "ignore-pbs",
          "get-user-env",
          "reboot",
          "no-requeue",
          "requeue",
          "nice",
          "kill-on-invalid-dep",
          "disable-stdout-job-summary",
          "usage",
          "help",
          "version");

  private final String fileName;

  private String name;
  private Integer nodes;
  private int nodesLine;
  private Integer ntasks;
  private Integer ntasksPerNode;
  private Integer gpusPerTask;
  private int gpusPerTaskLine;
  private Integer gpusPerNode;
  private int gpusPerNodeLine;
  private String gpusPerNodeText;
  private Integer gpusTotal;
  private int gpusTotalLine;
  private String gpusTotalText;
  private String gpuModel;
  private Integer cpus;
  private Long memoryMb;
  private String timeLimit;
  private String queue;
  private List<String> exclude;
  private String warnSignal;
  private String array;
  private String dependency;
  private String output;
  private String error;
  private String workdir;
  private String account;
  private String qos;
  private String export;

  SbatchOptions(String fileName) {
    this.fileName = fileName;
  }

  /** One {@code #SBATCH} line, as words; warnings are added to {@code warnings}. */
  void apply(int line, List<String> words, List<String> warnings) {
    for (int i = 0; i < words.size(); i++) {
      String word = words.get(i);
      String key;
      String value = null;
      boolean attached = false;
      if (word.startsWith("--") && word.length() > 2) {
        int eq = word.indexOf('=');
        key = longName(eq < 0 ? word.substring(2) : word.substring(2, eq), line, word);
        if (eq >= 0) {
          value = word.substring(eq + 1);
          attached = true;
        }
      } else if (word.startsWith("-") && word.length() > 1 && word.charAt(1) != '-') {
        key = word.substring(1, 2);
        if (word.length() > 2) {
          value = word.substring(word.charAt(2) == '=' ? 3 : 2);
          attached = true;
        }
      } else {
        throw new UsageException(
            fileName
                + " line "
                + line
                + ": #SBATCH "
                + word
                + ": not an option; write #SBATCH --option=value, e.g. #SBATCH --time=1:00:00");
      }
      Spec spec = spec(key);
      boolean takesValue = spec != null ? spec.takesValue() : !FLAGS.contains(key);
      if (!attached
          && takesValue
          && i + 1 < words.size()
          && (spec != null || !words.get(i + 1).startsWith("-"))) {
        value = words.get(++i);
      }
      // As a user would write it: -N 2, --nodes=2.
      String shown =
          key.length() == 1
              ? "-" + key + (value == null ? "" : " " + value)
              : "--" + key + (value == null ? "" : "=" + value);
      var d = new Directive(fileName, line, shown);
      if (spec == null) {
        warnings.add(d.unsupported(""));
        continue;
      }
      if (spec.takesValue() && value == null) {
        throw d.fail(
            "needs a value; write "
                + (key.length() == 1 ? "-" + key + " VALUE" : "--" + key + "=VALUE"));
      }
      if (!spec.takesValue() && attached) {
        throw d.fail("takes no value; write --" + spec.name());
      }
      set(spec.name(), value, d, warnings);
    }
  }

  /** Whether sbatch's option {@code key} (a resolved long name, or a letter) takes a value. */
  static boolean takesValue(String key) {
    Spec spec = spec(key);
    return spec != null ? spec.takesValue() : !FLAGS.contains(key);
  }

  /**
   * The long option {@code key} names: itself, or the one option it is an unambiguous prefix of (as
   * sbatch's getopt reads it); an unknown name is kept (and warned about as unsupported).
   */
  private String longName(String key, int line, String word) {
    if (SbatchLongOptions.NAMES.contains(key)
        || SPECS.stream().anyMatch(o -> o.name().equals(key))) {
      return key.equals("tasks-per-node") ? "ntasks-per-node" : key;
    }
    List<String> matches = SbatchLongOptions.NAMES.stream().filter(o -> o.startsWith(key)).toList();
    if (matches.size() == 1) {
      return matches.getFirst().equals("tasks-per-node") ? "ntasks-per-node" : matches.getFirst();
    }
    if (matches.size() > 1) {
      throw new Directive(fileName, line, word)
          .fail(
              "the option is ambiguous (as in sbatch): it may be --"
                  + String.join(", --", matches)
                  + "; write the option's whole name");
    }
    return key;
  }

  private static Spec spec(String key) {
    for (Spec s : SPECS) {
      if (s.name().equals(key) || (key.length() == 1 && s.letter() == key.charAt(0))) {
        return s;
      }
    }
    return null;
  }

  private void set(String option, String value, Directive d, List<String> warnings) {
    try {
      switch (option) {
        case "job-name" -> name = value;
        case "nodes" -> {
          if (value.matches("\\d+-\\d+")) {
            throw new IllegalArgumentException(
                "Kairos takes an exact node count, not a range; write e.g. --nodes=2");
          }
          nodes = count(value, 1, "a node count");
          nodesLine = d.line();
        }
        case "ntasks" -> ntasks = count(value, 1, "a task count");
        case "ntasks-per-node" -> ntasksPerNode = count(value, 1, "a task count");
        case "gres" -> gres(value, d, warnings);
        case "gpus-per-task" -> {
          gpusPerTask = gpuCount(value);
          gpusPerTaskLine = d.line();
        }
        case "gpus-per-node" -> {
          gpusPerNode = gpuCount(value);
          gpusPerNodeLine = d.line();
          gpusPerNodeText = d.text();
        }
        case "gpus" -> {
          gpusTotal = gpuCount(value);
          gpusTotalLine = d.line();
          gpusTotalText = d.text();
        }
        case "time" -> timeLimit = SlurmSyntax.clock(SlurmSyntax.timeLimitSec(value));
        case "partition" -> {
          if (value.contains(",")) {
            throw new IllegalArgumentException(
                "Kairos takes one queue, not a list; name one, e.g. -p " + value.split(",")[0]);
          }
          queue = value;
        }
        case "cpus-per-task" -> cpus = count(value, 1, "a CPU count");
        case "mem" -> memoryMb = memory(value);
        case "exclude" -> {
          if (value.contains("/")) {
            throw new IllegalArgumentException(
                "Kairos does not read node lists from files; list the nodes, e.g. n[1-3],n7");
          }
          exclude = SlurmSyntax.hostList(value);
        }
        case "signal" -> warnSignal = signal(value, d, warnings);
        case "array" -> array = value;
        case "dependency" -> dependency = value;
        case "output" -> output = value;
        case "error" -> error = value;
        case "chdir" -> workdir = value;
        case "open-mode" -> {
          if (!value.equals("append")) {
            warnings.add(d.unsupported(": Kairos always appends to --output and --error files"));
          }
        }
        case "requeue" -> {
          // Kairos always requeues a job whose node is lost; nothing to set.
        }
        case "no-requeue" ->
            warnings.add(
                d.unsupported(
                    ": Kairos always requeues a job whose node is lost (a failed exit restarts only"
                        + " with #KAIROS --max-restarts)"));
        case "account" -> account = value;
        // A QOS is a priority class in Kairos, when the controller has one of that name.
        case "qos" -> qos = value;
        case "export" -> export = value;
        default -> throw new IllegalStateException("option " + option + " has no handler");
      }
    } catch (IllegalArgumentException e) {
      throw d.fail(e.getMessage());
    } catch (UsageException e) {
      throw d.fail(e.getMessage().replaceFirst("^--mem: ", ""));
    }
  }

  /** {@code gpu:4}, {@code gpu:h100:4}, {@code gpu} (one); other resources are warned about. */
  private void gres(String value, Directive d, List<String> warnings) {
    boolean any = false;
    for (String entry : value.split(",")) {
      String e = entry.startsWith("gres/") ? entry.substring(5) : entry;
      String[] parts = e.split(":", -1);
      if (!parts[0].equals("gpu")) {
        warnings.add(
            d.unsupported(": Kairos knows only the gpu resource; '" + entry + "' was ignored"));
        continue;
      }
      any = true;
      switch (parts.length) {
        case 1 -> gpusPerNode = 1;
        case 2 -> {
          if (parts[1].matches("\\d+")) {
            gpusPerNode = count(parts[1], 0, "a GPU count");
          } else {
            model(parts[1]);
            gpusPerNode = 1;
          }
        }
        case 3 -> {
          model(parts[1]);
          gpusPerNode = count(parts[2], 0, "a GPU count");
        }
        default ->
            throw new IllegalArgumentException(
                "cannot read '" + entry + "'; write gpu:COUNT or gpu:MODEL:COUNT, e.g. gpu:h100:8");
      }
    }
    if (any) {
      gpusPerNodeLine = d.line();
      gpusPerNodeText = d.text();
    }
  }

  /** {@code 8} or {@code MODEL:8}; the model goes to {@link #gpuModel}. */
  private int gpuCount(String value) {
    int colon = value.lastIndexOf(':');
    if (colon >= 0) {
      model(value.substring(0, colon));
    }
    return count(value.substring(colon + 1), 0, "a GPU count");
  }

  private void model(String model) {
    if (model.isEmpty() || model.contains(":")) {
      throw new IllegalArgumentException(
          "cannot read the GPU model '" + model + "'; write MODEL:COUNT, e.g. h100:8");
    }
    if (gpuModel != null && !gpuModel.equals(model)) {
      throw new IllegalArgumentException(
          "asks for GPU model " + model + " after " + gpuModel + "; ask for one model");
    }
    gpuModel = model;
  }

  private static String signal(String value, Directive d, List<String> warnings) {
    String v = value;
    if (v.startsWith("B:")) {
      // Slurm sends it to the batch shell only; Kairos signals every process of every task,
      // which a script that traps the signal also sees.
      warnings.add(
          "#SBATCH "
              + d.text()
              + ": the B: prefix was noted: Kairos sends the signal to"
              + " every process of every task, the batch shell included ("
              + d.file()
              + " line "
              + d.line()
              + ")");
      v = v.substring(2);
    } else if (v.startsWith("R:")) {
      throw new IllegalArgumentException("Kairos has no reservations; drop the R: prefix");
    }
    int at = v.indexOf('@');
    String signal = SlurmSyntax.signal(at < 0 ? v : v.substring(0, at));
    if (at < 0) {
      return signal;
    }
    String seconds = v.substring(at + 1);
    if (!seconds.matches("\\d{1,5}") || Integer.parseInt(seconds) < 1) {
      throw new IllegalArgumentException(
          "'" + seconds + "' is not a number of seconds; write SIG@SECONDS, e.g. USR1@120");
    }
    return signal + "@" + Integer.parseInt(seconds);
  }

  private static long memory(String value) {
    if (value.matches("(?i)\\d+(\\.\\d+)?\\s*[kmgt]?")) {
      return SubmitCommand.memoryMb(value);
    }
    throw new IllegalArgumentException(
        "cannot read the size '"
            + value
            + "'; write MiB (16000) or a size with K, M, G or T,"
            + " e.g. 64G");
  }

  private static int count(String text, int min, String what) {
    if (!text.matches("\\d{1,6}") || Integer.parseInt(text) < min) {
      throw new IllegalArgumentException(
          "'" + text + "' is not " + what + "; write a whole number of at least " + min);
    }
    return Integer.parseInt(text);
  }

  /** The gathered options: nodes and GPUs resolved. */
  JobSubmission build(List<String> warnings) {
    int n = nodes == null ? 1 : nodes;
    if (gpusPerTask != null && gpusPerTask > 0 && gpusPerNode == null && gpusTotal == null) {
      // --gpus-per-task alone: each node's GPUs are its tasks' (--ntasks=4 on 4 nodes: 1 each).
      int perNode = ntasksPerNode != null ? ntasksPerNode : ntasks != null ? ntasks / n : 1;
      if (ntasksPerNode == null && ntasks != null && ntasks % n != 0) {
        throw new Directive(fileName, gpusPerTaskLine, "--gpus-per-task=" + gpusPerTask)
            .fail(
                ntasks
                    + " tasks do not spread evenly over "
                    + n
                    + " nodes, so their GPUs do not either; ask for --ntasks-per-node");
      }
      gpusPerNode = perNode * gpusPerTask;
      gpusPerNodeLine = gpusPerTaskLine;
      gpusPerNodeText = "--gpus-per-task=" + gpusPerTask;
    }
    Integer gpus = null;
    Integer perNode = null;
    if (gpusPerNode != null) {
      if (gpusTotal != null && gpusTotal != n * gpusPerNode) {
        throw new Directive(fileName, gpusTotalLine, gpusTotalText)
            .fail(
                "asks for "
                    + gpusTotal
                    + " GPUs in total, but "
                    + n
                    + " node(s) with "
                    + gpusPerNode
                    + " each ("
                    + gpusPerNodeText
                    + ") make "
                    + (n * gpusPerNode)
                    + "; keep one of the two");
      }
      gpus = n * gpusPerNode;
      perNode = n > 1 ? gpusPerNode : null;
    } else if (gpusTotal != null) {
      if (gpusTotal % n != 0) {
        throw new Directive(fileName, gpusTotalLine, gpusTotalText)
            .fail(
                gpusTotal
                    + " GPUs do not split evenly over "
                    + n
                    + " nodes; ask for a multiple of "
                    + n
                    + ", or for --gpus-per-node");
      }
      gpus = gpusTotal;
      perNode = n > 1 ? gpusTotal / n : null;
    }
    // Without GPUs, the node count itself spreads the job (one task per node).
    Integer nodeCount = n > 1 && (gpus == null || gpus == 0) ? n : null;
    return new JobSubmission(
            name,
            null,
            null,
            workdir,
            gpus,
            perNode,
            cpus,
            memoryMb,
            timeLimit,
            queue,
            null,
            gpuModel,
            null,
            null,
            null,
            warnSignal,
            null,
            null,
            exclude,
            array,
            dependency,
            output,
            error,
            account,
            null,
            null,
            nodeCount,
            qos)
        .withTasks(ntasks, ntasksPerNode, gpusPerTask);
  }

  /** The {@code --export} value given, or null: ALL, NONE, or names and NAME=VALUE pairs. */
  String export() {
    return export;
  }

  /** Where one option came from, for messages: file, line and the option as written. */
  record Directive(String file, int line, String text) {
    UsageException fail(String problem) {
      if (line == COMMAND_LINE) {
        return new UsageException(text + ": " + problem);
      }
      return new UsageException(file + " line " + line + ": #SBATCH " + text + ": " + problem);
    }

    String unsupported(String why) {
      if (line == COMMAND_LINE) {
        return text + " is not supported and was ignored" + why;
      }
      return "#SBATCH "
          + text
          + " is not supported and was ignored"
          + why
          + " ("
          + file
          + " line "
          + line
          + ")";
    }
  }

  /** The line number of options given on sbatch's command line, not in the script. */
  static final int COMMAND_LINE = 0;
}

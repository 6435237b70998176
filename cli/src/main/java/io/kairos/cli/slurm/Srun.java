package io.kairos.cli.slurm;

import io.kairos.protocol.slurm.StepExit;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Kairos' {@code srun}: starts a job step in the running job it is called from (its {@code
 * SLURM_JOB_ID}), through the controller, which lays the tasks out in the job's allocation by
 * srun's rules and has the agents start them as the job's owner. It then forwards what the tasks
 * write to its own stdout and stderr (whole lines; {@code --label} puts the rank before each, as
 * {@code 0: }), and exits with the step's exit code as Slurm's srun computes it ({@link StepExit}),
 * having said, as srun does, which tasks failed ({@code srun: error: n1: task 1: Exited with exit
 * code 3}).
 *
 * <p>Signals: SIGTERM, SIGINT or SIGHUP stop the step's tasks at once (SIGKILL) and srun exits with
 * the step's code (137), as Slurm's srun does when told to stop ("forcing job termination"). A step
 * whose job ends stops with it.
 *
 * <p>Output is polled: at once after output came, else held by the controller up to {@value
 * #POLL_MS} ms or until the step ends, so the end is seen at once.
 */
final class Srun {
  static final long POLL_MS = 200;
  static final long ABORT_WAIT_MS = 5_000;

  private final Map<String, String> env;
  private final PrintStream out;
  private final PrintStream err;

  Srun(Map<String, String> env, PrintStream out, PrintStream err) {
    this.env = env;
    this.out = out;
    this.err = err;
  }

  /** Runs srun with {@code args}; returns its exit code. */
  int run(List<String> args) {
    SrunOptions o;
    try {
      o = SrunOptions.parse(args, env);
    } catch (IllegalArgumentException e) {
      err.println("srun: " + e.getMessage());
      err.println("Try \"srun --help\" for more information");
      return 1;
    }
    if (o.help) {
      out.println(HELP);
      return 0;
    }
    if (o.version) {
      out.println("srun (Kairos)");
      return 0;
    }
    o.notes.forEach(n -> err.println("srun: " + n));
    if (o.command.isEmpty()) {
      err.println("srun: fatal: No command given to execute.");
      return 1;
    }
    Long jobId = o.jobId != null ? o.jobId : envLong("SLURM_JOB_ID");
    if (jobId == null) {
      err.println(
          "srun: error: no job to start a step in: Kairos' srun runs inside a Kairos job"
              + " (SLURM_JOB_ID is not set); submit the script with kairos submit");
      return 1;
    }
    ControllerLink link;
    try {
      link = ControllerLink.fromEnvironment(env);
    } catch (IllegalStateException e) {
      err.println("srun: error: " + e.getMessage());
      return 1;
    }
    try {
      return new Step(link, jobId, o).run();
    } catch (IOException e) {
      err.println("srun: error: the Kairos controller did not answer: " + e.getMessage());
      return 1;
    }
  }

  private Long envLong(String name) {
    String v = env.get(name);
    try {
      return v == null ? null : Long.parseLong(v.strip());
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /** One step's life: start it, forward its output, report its end. */
  private final class Step {
    private final ControllerLink link;
    private final long jobId;
    private final SrunOptions o;
    private final String base;
    private final Map<String, StringBuilder> partial = new LinkedHashMap<>();
    private final AtomicBoolean finished = new AtomicBoolean();
    private final CompletableFuture<Integer> exit = new CompletableFuture<>();
    private List<Long> offsets = List.of();

    Step(ControllerLink link, long jobId, SrunOptions o) {
      this.link = link;
      this.jobId = jobId;
      this.o = o;
      this.base = "/api/v1/jobs/" + jobId + "/steps";
    }

    int run() throws IOException {
      var body = new LinkedHashMap<String, Object>();
      body.put("command", o.command);
      body.put("env", o.environment(env));
      body.put(
          "workdir",
          o.chdir != null
              ? Path.of(env.getOrDefault("PWD", "/")).resolve(o.chdir).normalize().toString()
              : System.getProperty("user.dir"));
      body.put("nodes", o.nodes);
      body.put("ntasks", o.ntasks);
      body.put("ntasksPerNode", o.ntasksPerNode);
      body.put("nodelist", o.nodelist.isEmpty() ? null : o.nodelist);
      body.put("exclude", o.exclude.isEmpty() ? null : o.exclude);
      body.put("gpusPerTask", o.gpusPerTask);
      body.put("cpusPerTask", o.cpusPerTask);
      body.values().removeIf(v -> v == null);
      var reply = link.post(base, TinyJson.write(body));
      if (!reply.ok()) {
        err.println("srun: error: Unable to create step for job " + jobId + ": " + reply.detail());
        return 1;
      }
      var view = map(TinyJson.parse(reply.body()));
      long stepId = number(view.get("step"));
      for (Object w : list(view.get("warnings"))) {
        // srun says nothing when -n came from SLURM_NTASKS (a Slurm 22.05 ran such steps quietly).
        if (!(o.ntasksFromEnv && w.toString().startsWith("Warning: can't honor"))) {
          err.println("srun: " + w);
        }
      }
      String stepPath = base + "/" + stepId;
      Thread hook = Thread.ofPlatform().unstarted(() -> abort(stepPath));
      Runtime.getRuntime().addShutdownHook(hook);
      int code;
      try {
        Map<String, Object> last = forward(stepPath);
        flushPartials();
        code = report(last);
      } finally {
        finished.set(true);
      }
      exit.complete(code);
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException e) {
        // Shutting down already: the hook reports.
      }
      return code;
    }

    /** Polls the output until the step has ended and all of it is out; returns the last view. */
    private Map<String, Object> forward(String stepPath) throws IOException {
      boolean any = true;
      while (true) {
        var reply =
            link.get(
                stepPath + "/output?offsets=" + join(offsets) + (any ? "" : "&waitMs=" + POLL_MS));
        if (!reply.ok()) {
          throw new IOException("reading the step's output: " + reply.detail());
        }
        var output = map(TinyJson.parse(reply.body()));
        any = false;
        for (Object c : list(output.get("chunks"))) {
          var chunk = map(c);
          write(
              (int) number(chunk.get("rank")),
              "stderr".equals(chunk.get("stream")),
              Base64.getDecoder().decode((String) chunk.get("data")));
          any = true;
        }
        out.flush();
        err.flush();
        var next = new ArrayList<Long>();
        for (Object n : list(output.get("offsets"))) {
          next.add(number(n));
        }
        offsets = next;
        if (Boolean.TRUE.equals(output.get("done"))) {
          return map(output.get("step"));
        }
      }
    }

    /** Writes what a task wrote, whole lines only, with its rank first under --label. */
    private void write(int rank, boolean stderr, byte[] data) {
      String key = rank + (stderr ? "e" : "o");
      StringBuilder pending = partial.computeIfAbsent(key, k -> new StringBuilder());
      pending.append(new String(data, java.nio.charset.StandardCharsets.UTF_8));
      int nl;
      PrintStream to = stderr ? err : out;
      while ((nl = pending.indexOf("\n")) >= 0) {
        if (o.label) {
          to.print(rank + ": ");
        }
        to.print(pending.substring(0, nl + 1));
        pending.delete(0, nl + 1);
      }
    }

    private void flushPartials() {
      for (var e : partial.entrySet()) {
        if (e.getValue().isEmpty()) {
          continue;
        }
        String key = e.getKey();
        PrintStream to = key.endsWith("e") ? err : out;
        if (o.label) {
          to.print(key.substring(0, key.length() - 1) + ": ");
        }
        to.print(e.getValue());
        e.getValue().setLength(0);
      }
      out.flush();
      err.flush();
    }

    /** srun's words for the tasks that did not exit 0, and the step's exit code. */
    private int report(Map<String, Object> view) {
      List<Object> nodes = list(view.get("nodes"));
      List<Object> perNode = list(view.get("tasksPerNode"));
      List<Object> exits = list(view.get("taskExits"));
      int rank = 0;
      for (int n = 0; n < nodes.size(); n++) {
        int count = (int) number(perNode.get(n));
        int run = rank;
        while (run < rank + count) {
          String what = describe(exits, run);
          int end = run;
          while (end + 1 < rank + count
              && java.util.Objects.equals(describe(exits, end + 1), what)) {
            end++;
          }
          if (what != null) {
            err.println(
                "srun: error: "
                    + nodes.get(n)
                    + ": task"
                    + (end > run ? "s " + run + "-" + end : " " + run)
                    + ": "
                    + what);
          }
          run = end + 1;
        }
        rank += count;
      }
      Object message = view.get("message");
      if ("CANCELLED".equals(view.get("state")) && message != null) {
        err.println("srun: Job step aborted: " + message);
      }
      Object code = view.get("exitCode");
      return code == null ? 1 : (int) number(code);
    }

    private static String describe(List<Object> exits, int rank) {
      Object code = rank < exits.size() ? exits.get(rank) : null;
      return code == null ? null : StepExit.describe((int) number(code));
    }

    /**
     * Signalled: the tasks get SIGKILL now; the main thread, still forwarding, sees the step end
     * and reports it; exit with its code (137 when it does not end in time).
     */
    private void abort(String stepPath) {
      if (finished.get()) {
        return;
      }
      err.println("srun: forcing job termination");
      int code = 128 + 9;
      try {
        link.post(stepPath + "/cancel?now=true", "{}");
        code = exit.get(ABORT_WAIT_MS, TimeUnit.MILLISECONDS);
      } catch (TimeoutException e) {
        err.println("srun: error: Timed out waiting for job step to complete");
      } catch (IOException | RuntimeException | ExecutionException e) {
        err.println("srun: error: could not stop the step: " + e.getMessage());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      out.flush();
      err.flush();
      Runtime.getRuntime().halt(code);
    }
  }

  private static String join(List<Long> values) {
    var s = new StringBuilder();
    for (Long v : values) {
      if (s.length() > 0) {
        s.append(',');
      }
      s.append(v);
    }
    return s.toString();
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> map(Object o) {
    return o instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
  }

  @SuppressWarnings("unchecked")
  static List<Object> list(Object o) {
    return o instanceof List<?> l ? (List<Object>) l : List.of();
  }

  static long number(Object o) {
    return o instanceof Number n ? n.longValue() : 0;
  }

  static final String HELP =
      """
      Usage: srun [OPTIONS] executable [args...]
      Kairos' srun: starts a job step's tasks across the allocation of the Kairos job it runs in.
        -n, --ntasks=N            tasks to run (default: $SLURM_NTASKS, else one per node)
        -N, --nodes=N             nodes to use (default: $SLURM_NNODES, all of the job's)
            --ntasks-per-node=N   tasks on each node
        -w, --nodelist=LIST       nodes to use (n[1-3],n7), each in the job's allocation
        -x, --exclude=LIST        nodes not to use
            --gpus-per-task=N     each task gets N of the job's GPUs on its node, its own
        -c, --cpus-per-task=N     handed to the tasks as SLURM_CPUS_PER_TASK
            --export=ALL|NONE|VARS  environment of the tasks (default ALL: srun's own)
        -l, --label               put the task's rank before each line of output
        -D, --chdir=DIR           the tasks' working directory (default: srun's)
            --jobid=ID            start the step in job ID (default: $SLURM_JOB_ID)
      Exit code: the step's, as Slurm's srun: 128 + the highest signal when a task was killed
      by one, else the highest exit code.""";
}

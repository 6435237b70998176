package io.kairos.control.api;

import io.javalin.config.JavalinConfig;
import io.javalin.http.Context;
import io.kairos.control.agent.AgentLogs;
import io.kairos.control.auth.Principal;
import io.kairos.control.state.ControlCommand.CancelStep;
import io.kairos.control.state.ControlCommand.StartStep;
import io.kairos.control.state.ControlResult;
import io.kairos.control.state.ControlState;
import io.kairos.control.state.JobRecord;
import io.kairos.control.state.StepRecord;
import io.kairos.control.state.StepRequest;
import io.kairos.protocol.JobState;
import io.kairos.protocol.StepOutput;
import io.kairos.protocol.StepSubmission;
import io.kairos.protocol.StepView;
import io.kairos.protocol.TaskPlacement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Pattern;

/**
 * {@code /api/v1/jobs/{id}/steps}: job steps, as Kairos' srun starts them inside a running job.
 *
 * <ul>
 *   <li>{@code POST .../steps} ({@link StepSubmission}): lays the step out in the job's allocation
 *       by srun's rules and starts it; 201 with its {@link StepView} (Slurm's warnings included),
 *       400 with Slurm's words when it does not fit, 409 when the job does not run.
 *   <li>{@code GET .../steps}, {@code GET .../steps/{step}?waitMs=N}: a step, held up to N ms (at
 *       most {@value #MAX_WAIT_MS}) until it has ended.
 *   <li>{@code GET .../steps/{step}/output?offsets=...&waitMs=N}: what its tasks wrote since the
 *       offsets (two per rank), fetched from the agents that run them ({@link StepOutput}); while
 *       the step runs, first held up to N ms (at most {@value #MAX_WAIT_MS}) or until it ends, so
 *       that srun learns of the end at once and of output every N ms.
 *   <li>{@code POST .../steps/{step}/cancel?now=true}: stops its tasks (at once with {@code now},
 *       as Slurm's srun does when signalled).
 * </ul>
 *
 * <p>Who may: the job's owner, an admin, and the job's own step credential (a token scoped to the
 * job's steps, which its tasks get as {@code KAIROS_JOB_TOKEN}); nobody else, so a job cannot start
 * steps in another's allocation.
 */
final class StepRoutes {
  static final long MAX_WAIT_MS = 10_000;
  static final int MAX_COMMAND_WORDS = 4096;
  static final int MAX_ENV_BYTES = 1 << 20;
  private static final Pattern NODE = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,62}");

  private StepRoutes() {}

  static void register(JavalinConfig config, Services s) {
    config.routes.post("/api/v1/jobs/{id}/steps", ctx -> start(ctx, s));
    config.routes.get("/api/v1/jobs/{id}/steps", ctx -> list(ctx, s));
    config.routes.get("/api/v1/jobs/{id}/steps/{step}", ctx -> view(ctx, s));
    config.routes.get("/api/v1/jobs/{id}/steps/{step}/output", ctx -> output(ctx, s));
    config.routes.post("/api/v1/jobs/{id}/steps/{step}/cancel", ctx -> cancel(ctx, s));
  }

  /** The job, when {@code who} may use its steps; else 404 or 403. */
  private static JobRecord job(ControlState st, Principal who, long id) {
    JobRecord job = st.job(id).orElseThrow(() -> ApiError.notFound("no job " + id));
    boolean allowed =
        who.isAdmin()
            || (who.isJobScoped() ? who.scopedJob() == id : who.user().equals(job.request.user()));
    if (!allowed) {
      throw ApiError.forbidden(
          "job "
              + id
              + " belongs to "
              + job.request.user()
              + "; only they, an admin or the job itself may use its steps");
    }
    return job;
  }

  private static void start(Context ctx, Services s) {
    Principal who = Api.user(ctx);
    long id = JobRoutes.id(ctx);
    StepSubmission body = Json.read(ctx.bodyAsBytes(), StepSubmission.class);
    StepRequest request = validate(body, who);
    int attempt =
        s.read(
            st -> {
              JobRecord job = job(st, who, id);
              if (job.state != JobState.RUNNING || job.requeueing) {
                throw ApiError.conflict(
                    "job " + id + " is not running (" + job.state + "): no step starts");
              }
              try {
                ControlState.stepLayout(job, request);
              } catch (IllegalArgumentException e) {
                throw ApiError.invalid(null, e.getMessage(), null);
              }
              return job.attempt;
            });
    ControlResult result =
        Services.check(s.commit(new StartStep(s.clock().millis(), id, attempt, request)));
    int step = result.ids().getFirst().intValue();
    ctx.status(201);
    ctx.header("Location", "/api/v1/jobs/" + id + "/steps/" + step);
    ctx.json(s.read(st -> st.step(id, step).map(r -> r.view(id)).orElseThrow()));
  }

  /** The submission as the log records it; 400 naming the field for what cannot run. */
  static StepRequest validate(StepSubmission b, Principal who) {
    List<String> command = b.command() == null ? List.of() : b.command();
    Submissions.check(
        !command.isEmpty()
            && command.size() <= MAX_COMMAND_WORDS
            && command.stream().allMatch(w -> w != null && w.indexOf('\0') < 0)
            && !command.getFirst().isBlank(),
        "command",
        "command must name a program, with at most " + MAX_COMMAND_WORDS + " words and no NUL",
        "give the program and its arguments, e.g. [\"hostname\"]");
    Map<String, String> env = b.env() == null ? Map.of() : b.env();
    long envBytes = 0;
    for (var e : env.entrySet()) {
      Submissions.check(
          e.getKey() != null
              && !e.getKey().isEmpty()
              && e.getKey().indexOf('=') < 0
              && e.getKey().indexOf('\0') < 0
              && (e.getValue() == null || e.getValue().indexOf('\0') < 0),
          "env",
          "env names must be non-empty, without '=' or NUL, and values without NUL",
          null);
      envBytes += e.getKey().length() + (e.getValue() == null ? 0 : e.getValue().length()) + 2;
    }
    Submissions.check(
        envBytes <= MAX_ENV_BYTES,
        "env",
        "env is larger than " + (MAX_ENV_BYTES >> 10) + " KiB",
        "export fewer variables (srun --export)");
    String workdir = b.workdir() == null ? "" : b.workdir();
    Submissions.check(
        workdir.isEmpty()
            || (workdir.startsWith("/") && workdir.length() <= 4096 && workdir.indexOf('\0') < 0),
        "workdir",
        "workdir must be an absolute path",
        null);
    positive(b.nodes(), "nodes", 1 << 16);
    positive(b.ntasks(), "ntasks", 1 << 20);
    positive(b.ntasksPerNode(), "ntasksPerNode", io.kairos.protocol.slurm.TaskLayout.MAX_PER_NODE);
    positive(b.gpusPerTask(), "gpusPerTask", Submissions.MAX_GPUS_PER_NODE);
    positive(b.cpusPerTask(), "cpusPerTask", 4096);
    List<String> nodelist = names(b.nodelist(), "nodelist");
    List<String> exclude = names(b.exclude(), "exclude");
    return new StepRequest(
        command,
        env,
        workdir,
        b.nodes(),
        b.ntasks(),
        b.ntasksPerNode(),
        nodelist,
        exclude,
        b.gpusPerTask() == null ? 0 : b.gpusPerTask(),
        b.cpusPerTask() == null ? 0 : b.cpusPerTask(),
        who.user());
  }

  private static void positive(Integer value, String field, int max) {
    Submissions.check(
        value == null || (value >= 1 && value <= max),
        field,
        field + " must be between 1 and " + max + ", got " + value,
        null);
  }

  private static List<String> names(List<String> names, String field) {
    if (names == null) {
      return List.of();
    }
    Submissions.check(names.size() <= 4096, field, field + " names at most 4096 nodes", null);
    for (String n : names) {
      Submissions.check(
          n != null && NODE.matcher(n).matches(),
          field,
          "'" + (n == null ? "null" : Submissions.clip(n)) + "' is not a node name",
          "name nodes as the job's SLURM_JOB_NODELIST does");
    }
    return List.copyOf(names);
  }

  private static void list(Context ctx, Services s) {
    Principal who = Api.user(ctx);
    long id = JobRoutes.id(ctx);
    ctx.json(
        s.read(
            st -> {
              JobRecord job = job(st, who, id);
              var views = new ArrayList<StepView>();
              for (StepRecord r : job.steps) {
                views.add(r.view(id));
              }
              return views;
            }));
  }

  private static int stepId(Context ctx) {
    try {
      int step = Integer.parseInt(ctx.pathParam("step"));
      if (step < 0) {
        throw new NumberFormatException();
      }
      return step;
    } catch (NumberFormatException e) {
      throw ApiError.invalid(
          "step", "'" + Submissions.clip(ctx.pathParam("step")) + "' is not a step id", null);
    }
  }

  private static StepView read(Services s, Principal who, long id, int step) {
    return s.read(
        st -> {
          job(st, who, id);
          return st.step(id, step)
              .map(r -> r.view(id))
              .orElseThrow(() -> ApiError.notFound("no step " + id + "." + step));
        });
  }

  private static void view(Context ctx, Services s) throws InterruptedException {
    Principal who = Api.user(ctx);
    long id = JobRoutes.id(ctx);
    int step = stepId(ctx);
    long waitMs = Math.min(MAX_WAIT_MS, JobRoutes.longParam(ctx, "waitMs", 0));
    var watch = s.replica().stateMachine().watch();
    long deadline = System.nanoTime() + waitMs * 1_000_000L;
    while (true) {
      long seen = watch.version();
      StepView view = read(s, who, id, step);
      long left = (deadline - System.nanoTime()) / 1_000_000L;
      if (view.ended() || left <= 0) {
        ctx.json(view);
        return;
      }
      watch.awaitChange(seen, left);
    }
  }

  private static void cancel(Context ctx, Services s) {
    Principal who = Api.user(ctx);
    long id = JobRoutes.id(ctx);
    int step = stepId(ctx);
    read(s, who, id, step);
    boolean now = "true".equals(ctx.queryParam("now"));
    ControlResult r = s.commit(new CancelStep(s.clock().millis(), id, step, who.user(), now));
    if (r.status() == 404) {
      throw ApiError.notFound(r.error());
    }
    ctx.json(read(s, who, id, step));
  }

  /** Where one entry of the step runs, and how to ask its agent. */
  private record Entry(int first, int count, AgentLogs.Target target, int task) {}

  private static void output(Context ctx, Services s) throws InterruptedException {
    Principal who = Api.user(ctx);
    long id = JobRoutes.id(ctx);
    int step = stepId(ctx);
    var offsets = offsets(ctx.queryParam("offsets"));
    long waitMs = Math.min(MAX_WAIT_MS, JobRoutes.longParam(ctx, "waitMs", 0));
    if (waitMs > 0) {
      var watch = s.replica().stateMachine().watch();
      long deadline = System.nanoTime() + waitMs * 1_000_000L;
      while (true) {
        long seen = watch.version();
        long left = (deadline - System.nanoTime()) / 1_000_000L;
        if (read(s, who, id, step).ended() || left <= 0) {
          break;
        }
        watch.awaitChange(seen, left);
      }
    }
    record Where(StepView view, List<Entry> entries) {}
    Where where =
        s.read(
            st -> {
              job(st, who, id);
              StepRecord r =
                  st.step(id, step)
                      .orElseThrow(() -> ApiError.notFound("no step " + id + "." + step));
              var entries = new ArrayList<Entry>();
              int first = 0;
              for (int e = 0; e < r.placement.size(); e++) {
                TaskPlacement p = r.placement.get(e);
                var reg = st.node(p.node()).map(n -> n.registration).orElse(null);
                int count = r.tasksPerNode.get(e);
                entries.add(
                    new Entry(
                        first,
                        count,
                        reg == null
                            ? null
                            : new AgentLogs.Target(
                                p.node(),
                                reg.address(),
                                reg.logToken(),
                                st.node(p.node()).map(n -> n.credential).orElse(null)),
                        e));
                first += count;
              }
              return new Where(r.view(id), entries);
            });
    StepView view = where.view();
    var replies = new ArrayList<CompletableFuture<StepOutput>>();
    for (Entry e : where.entries()) {
      replies.add(fetch(s, view, e, offsets));
    }
    var chunks = new ArrayList<StepOutput.Chunk>();
    var next = new ArrayList<Long>();
    boolean done = view.ended();
    for (int k = 0; k < where.entries().size(); k++) {
      Entry e = where.entries().get(k);
      StepOutput reply = replies.get(k).join();
      for (int local = 0; local < e.count(); local++) {
        for (int stream = 0; stream < 2; stream++) {
          int at = 2 * local + stream;
          long mine = at(offsets, 2 * (e.first() + local) + stream);
          next.add(reply != null && at < reply.offsets().size() ? reply.offsets().get(at) : mine);
        }
      }
      if (reply == null) {
        continue; // unreachable, or its output is gone: what others wrote still goes out
      }
      for (StepOutput.Chunk c : reply.chunks()) {
        if (c.rank() >= 0 && c.rank() < e.count()) {
          chunks.add(new StepOutput.Chunk(e.first() + c.rank(), c.stream(), c.data()));
        }
      }
      done &= reply.done();
    }
    ctx.json(new StepOutput(chunks, next, done, view));
  }

  /**
   * One entry's new output from its agent; null when it cannot be had (then, once the step has
   * ended, there is nothing more to wait for from it).
   */
  private static CompletableFuture<StepOutput> fetch(
      Services s, StepView view, Entry e, List<Long> offsets) {
    if (e.target() == null) {
      return CompletableFuture.completedFuture(null);
    }
    var query = new StringBuilder();
    for (int local = 0; local < e.count(); local++) {
      for (int stream = 0; stream < 2; stream++) {
        if (query.length() > 0) {
          query.append(',');
        }
        query.append(at(offsets, 2 * (e.first() + local) + stream));
      }
    }
    String path =
        "/steps/"
            + view.jobId()
            + "/"
            + view.attempt()
            + "/"
            + view.step()
            + "/"
            + e.task()
            + "?offsets="
            + query;
    // Through the same channel as logs: the node proves itself, and no cluster token leaves.
    return CompletableFuture.supplyAsync(
        () -> {
          try {
            AgentLogs.Reply r = s.logs().fetch(e.target(), path);
            if (r.status() != 200) {
              return view.ended() && r.status() == 404 ? gone(e) : null;
            }
            return Json.read(r.body(), StepOutput.class);
          } catch (java.io.IOException | AgentLogs.Unproven ex) {
            return null;
          } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return null;
          }
        },
        r -> Thread.ofVirtual().start(r));
  }

  /** An entry whose spool is gone after the step ended: nothing more will come from it. */
  private static StepOutput gone(Entry e) {
    return new StepOutput(List.of(), List.of(), true, null);
  }

  private static long at(List<Long> offsets, int i) {
    return i < offsets.size() ? offsets.get(i) : 0;
  }

  private static List<Long> offsets(String raw) {
    var out = new ArrayList<Long>();
    if (raw == null || raw.isBlank()) {
      return out;
    }
    String[] words = raw.split(",");
    Submissions.check(words.length <= 2 * (1 << 20), "offsets", "too many offsets", null);
    for (String w : words) {
      try {
        long v = Long.parseLong(w.strip());
        if (v < 0) {
          throw new NumberFormatException();
        }
        out.add(v);
      } catch (NumberFormatException e) {
        throw ApiError.invalid(
            "offsets", "offsets must be non-negative integers, comma-separated", null);
      }
    }
    return out;
  }
}

package io.kairos.control.api;

import com.fasterxml.jackson.core.type.TypeReference;
import io.javalin.config.JavalinConfig;
import io.javalin.http.Context;
import io.kairos.control.agent.AgentLogs;
import io.kairos.control.auth.Principal;
import io.kairos.control.raft.SubmitBatcher;
import io.kairos.control.state.ControlCommand.CancelJob;
import io.kairos.control.state.ControlState;
import io.kairos.control.state.JobRecord;
import io.kairos.control.state.JobRequest;
import io.kairos.control.state.JobSize;
import io.kairos.control.state.Limits;
import io.kairos.protocol.JobState;
import io.kairos.protocol.JobSubmission;
import io.kairos.protocol.JobView;
import io.kairos.protocol.SubmitResult;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** {@code /api/v1/jobs}: submit (one or a batch), list, describe, cancel, logs. */
final class JobRoutes {
  static final int MAX_BATCH = 10_000;
  static final int DEFAULT_LIMIT = 10_000;

  /** Heap one job's view takes while a list is built and written (its strings are shared). */
  static final long VIEW_BYTES = 1024;

  /** The most an agent answers to one log read (its LogServer's default). */
  static final long LOG_CHUNK_BYTES = 1 << 20;

  private JobRoutes() {}

  static void register(JavalinConfig config, Services s) {
    config.routes.post("/api/v1/jobs", ctx -> submit(ctx, s));
    config.routes.get("/api/v1/jobs", ctx -> list(ctx, s));
    config.routes.get(
        "/api/v1/jobs/{id}",
        ctx -> {
          Principal who = Api.user(ctx);
          long id = id(ctx);
          ctx.json(
              s.read(st -> st.job(id).map(j -> view(s, st, j, who)))
                  .or(() -> AccountingRoutes.forgottenJob(s, id, who))
                  .orElseThrow(() -> ApiError.notFound("no job " + id)));
        });
    config.routes.post("/api/v1/jobs/{id}/cancel", ctx -> cancel(ctx, s));
    config.routes.get("/api/v1/jobs/{id}/logs", ctx -> logs(ctx, s));
  }

  private static void submit(Context ctx, Services s) throws InterruptedException {
    Principal who = Api.user(ctx);
    LoadShedder.Admission admitted;
    try {
      admitted = s.safeguards().shedder().admitSubmit();
    } catch (ApiError shed) {
      discardBody(ctx);
      throw shed;
    }
    try (admitted) {
      admitted(ctx, s, who);
    }
  }

  private static void admitted(Context ctx, Services s, Principal who) throws InterruptedException {
    try {
      s.read(
          st -> {
            SubmitChecks.early(s.safeguards(), who, st);
            return null;
          });
    } catch (ApiError refused) {
      discardBody(ctx);
      throw refused;
    }
    // A body of unknown length (chunked) takes the whole budget until it is read and measured.
    var budget = s.safeguards().budget();
    long declared = ctx.req().getContentLengthLong();
    String fix = "send fewer jobs per request";
    try (var _ =
        budget.reserve(
            declared < 0 ? budget.capacityBytes() : declared * RequestBudget.SUBMIT_EXPANSION,
            "this submit",
            fix)) {
      byte[] body = ctx.bodyAsBytes();
      budget.checkFits((long) body.length * RequestBudget.SUBMIT_EXPANSION, "this submit", fix);
      submit(ctx, s, who, body);
    }
  }

  /**
   * Parses and validates the jobs, checks them against the limits (each job's size, the user's
   * rate, and the counts as they stand), and hands them to the batcher; the state machine checks
   * the counts again when it applies them and may refuse the whole submit.
   */
  private static void submit(Context ctx, Services s, Principal who, byte[] body)
      throws InterruptedException {
    var tenancy = s.scheduler().tenancy().orElse(null);
    boolean batch = firstNonSpace(body) == '[';
    List<JobRequest> requests = new ArrayList<>();
    List<List<String>> warnings = new ArrayList<>();
    if (batch) {
      List<JobSubmission> list = Json.read(body, new TypeReference<List<JobSubmission>>() {});
      if (list.isEmpty() || list.size() > MAX_BATCH) {
        throw ApiError.invalid(
            null,
            "a batch holds 1 to " + MAX_BATCH + " jobs, got " + list.size(),
            "split it into several requests");
      }
      for (int i = 0; i < list.size(); i++) {
        var slurm = SlurmFields.apply(list.get(i), s.slurm(), tenancy, "[" + i + "].");
        warnings.add(slurm.warnings());
        requests.add(Submissions.validate(slurm.submission(), who, "[" + i + "].", tenancy));
      }
    } else {
      var slurm = SlurmFields.apply(Json.read(body, JobSubmission.class), s.slurm(), tenancy, "");
      warnings.add(slurm.warnings());
      requests.add(Submissions.validate(slurm.submission(), who, "", tenancy));
    }
    int jobs = requests.stream().mapToInt(JobRequest::jobCount).sum();
    if (jobs > MAX_BATCH) {
      throw ApiError.invalid(
          batch ? null : "array",
          "a submit makes at most " + MAX_BATCH + " jobs, this one " + jobs,
          "split it into several requests");
    }
    Limits limits = s.read(st -> s.safeguards().limits(st));
    SubmitChecks.size(requests, limits, batch);
    SubmitChecks.rate(
        s.safeguards(), who, requests.stream().mapToLong(JobSize::totalWeight).sum(), limits);
    s.read(
        st -> {
          for (int i = 0; i < requests.size(); i++) {
            String prefix = batch ? "[" + i + "]." : "";
            Submissions.checkDependencyJobs(requests.get(i), id -> st.job(id).isPresent(), prefix);
            requests.set(i, UserRoutes.withRunAs(st, s.runAs(), requests.get(i), prefix));
          }
          st.limits().ifPresent(l -> SubmitChecks.counts(st, l, requests));
          return null;
        });
    List<Long> ids;
    try {
      ids = s.batcher().submit(requests).get(Services.COMMIT_TIMEOUT_SEC, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof SubmitBatcher.Refused refused) {
        throw SubmitChecks.refused(refused.refusal());
      }
      throw ApiError.unavailable("the submission was not committed (no leader reachable?)");
    } catch (TimeoutException e) {
      throw ApiError.unavailable("the submission was not committed (no leader reachable?)");
    }
    // One result per submission: its first id, and for an array how many jobs it made.
    var results = new ArrayList<SubmitResult>(requests.size());
    int at = 0;
    for (int i = 0; i < requests.size(); i++) {
      JobRequest r = requests.get(i);
      List<String> said = warnings.get(i).isEmpty() ? null : warnings.get(i);
      results.add(new SubmitResult(ids.get(at), r.array() == null ? null : r.jobCount(), said));
      at += r.jobCount();
    }
    ctx.status(201);
    if (batch) {
      ctx.json(results);
    } else {
      ctx.header("Location", "/api/v1/jobs/" + ids.get(0));
      ctx.json(results.getFirst());
    }
  }

  /** The job as {@code who} may see it (its private data only when allowed). */
  static JobView view(Services s, ControlState st, JobRecord j, Principal who) {
    return Views.job(st, j, s.scheduler(), s.safeguards().mayRead(who, j.request));
  }

  /**
   * Reads and drops a body the reply does not need (at most {@link Api#MAX_BODY_BYTES}, never
   * kept), so that the client, still sending it, gets the reply rather than a reset connection.
   */
  private static void discardBody(Context ctx) {
    try (var in = ctx.req().getInputStream()) {
      byte[] scrap = new byte[64 << 10];
      long left = Api.MAX_BODY_BYTES;
      int n;
      while (left > 0 && (n = in.read(scrap, 0, (int) Math.min(scrap.length, left))) > 0) {
        left -= n;
      }
    } catch (java.io.IOException e) {
      // the client went away: nothing to answer anyway
    }
  }

  private static int firstNonSpace(byte[] body) {
    for (byte b : body) {
      if (b != ' ' && b != '\n' && b != '\r' && b != '\t') {
        return b;
      }
    }
    return -1;
  }

  private static void list(Context ctx, Services s) throws InterruptedException {
    Principal who = Api.user(ctx);
    Set<JobState> states = states(ctx.queryParam("state"));
    String user = ctx.queryParam("user");
    String queue = ctx.queryParam("queue");
    int limit = intParam(ctx, "limit", DEFAULT_LIMIT, 1, 1_000_000);
    boolean activeOnly = !states.isEmpty() && states.stream().noneMatch(JobState::isFinal);
    int expected =
        s.read(st -> Math.min(limit, activeOnly ? st.activeJobs().size() : st.jobCount()));
    List<JobView> views;
    try (var _ =
        s.safeguards()
            .budget()
            .reserve(
                (long) expected * VIEW_BYTES,
                "a list of " + expected + " jobs",
                "ask for fewer (limit=N) or filter by state or user")) {
      views = listViews(s, who, states, user, queue, limit, activeOnly);
      ctx.json(views);
    }
  }

  private static List<JobView> listViews(
      Services s,
      Principal who,
      Set<JobState> states,
      String user,
      String queue,
      int limit,
      boolean activeOnly) {
    return s.read(
        st -> {
          var picked = new ArrayDeque<JobRecord>();
          var source = activeOnly ? st.activeJobs() : st.jobs();
          for (JobRecord j : source) {
            if ((states.isEmpty() || states.contains(j.state))
                && (user == null || user.equals(j.request.user()))
                && (queue == null || queue.equals(j.request.queue()))) {
              picked.addLast(j);
              if (picked.size() > limit) {
                picked.removeFirst(); // keep the most recent
              }
            }
          }
          return picked.stream().map(j -> view(s, st, j, who)).toList();
        });
  }

  private static Set<JobState> states(String param) {
    var set = EnumSet.noneOf(JobState.class);
    if (param == null || param.isBlank()) {
      return set;
    }
    for (String part : param.split(",")) {
      try {
        set.add(JobState.valueOf(part.trim().toUpperCase(java.util.Locale.ROOT)));
      } catch (IllegalArgumentException e) {
        throw ApiError.invalid(
            "state",
            "'" + Submissions.clip(part) + "' is not a job state",
            "use PENDING, RUNNING, SUCCEEDED, FAILED or CANCELLED (comma-separated)");
      }
    }
    return set;
  }

  private static void cancel(Context ctx, Services s) {
    Principal who = Api.user(ctx);
    long id = id(ctx);
    String owner =
        s.read(st -> st.job(id).map(j -> j.request.user()))
            .orElseThrow(() -> ApiError.notFound("no job " + id));
    if (!who.isAdmin() && !owner.equals(who.user())) {
      throw ApiError.forbidden(
          "job " + id + " belongs to " + owner + "; only they or an admin may cancel it");
    }
    Services.check(s.commit(new CancelJob(s.clock().millis(), id, who.user())));
    ctx.json(s.read(st -> view(s, st, st.job(id).orElseThrow(), who)));
  }

  private static void logs(Context ctx, Services s) throws InterruptedException {
    Principal who = Api.user(ctx);
    long id = id(ctx);
    int task = intParam(ctx, "task", 0, 0, 1 << 20);
    long offset = longParam(ctx, "offset", 0);
    String stream = ctx.queryParamAsClass("stream", String.class).getOrDefault("stdout");
    if (!stream.equals("stdout") && !stream.equals("stderr")) {
      throw ApiError.invalid("stream", "stream must be stdout or stderr", null);
    }
    record Where(AgentLogs.Target target, int attempt, boolean done) {}
    Where where =
        s.read(
            st -> {
              JobRecord j = st.job(id).orElseThrow(() -> ApiError.notFound("no job " + id));
              if (!s.safeguards().mayRead(who, j.request)) {
                throw ApiError.forbidden(
                    "job "
                        + id
                        + "'s output is private to its owner ("
                        + j.request.user()
                        + ") and admins (this controller's --private-data is "
                        + s.safeguards().privateData()
                        + ")");
              }
              if (j.attempt == 0 || j.placement.isEmpty()) {
                throw ApiError.conflict("job " + id + " has not started yet: no logs");
              }
              if (task >= j.placement.size()) {
                throw ApiError.invalid(
                    "task", "job " + id + " has " + j.placement.size() + " tasks", null);
              }
              String node = j.placement.get(task).node();
              var record = st.node(node).orElse(null);
              if (record == null || record.registration == null) {
                throw ApiError.conflict("node " + node + " is gone: its logs are not reachable");
              }
              var target =
                  new AgentLogs.Target(
                      node,
                      record.registration.address(),
                      record.registration.logToken(),
                      record.credential);
              return new Where(target, j.attempt, j.state.isFinal());
            });
    String path =
        "/logs/"
            + id
            + "/"
            + where.attempt()
            + "/"
            + task
            + "?stream="
            + stream
            + "&offset="
            + offset;
    AgentLogs.Reply reply;
    try (var _ =
        s.safeguards().budget().reserve(2L * LOG_CHUNK_BYTES, "a log read", "retry in a moment")) {
      reply = s.logs().fetch(where.target(), path);
    } catch (AgentLogs.Unproven e) {
      throw new ApiError(502, "Agent unverified", e.getMessage(), null, null);
    } catch (java.io.IOException e) {
      throw new ApiError(
          502,
          "Agent unreachable",
          "the agent holding the logs ("
              + where.target().address()
              + ") did not answer: "
              + e.getClass().getSimpleName()
              + (e.getMessage() == null ? "" : " " + e.getMessage()),
          null,
          "retry; if the node is gone the logs went with it");
    }
    if (reply.status() == 404) {
      throw ApiError.notFound("no logs for job " + id + " task " + task + " on its node");
    }
    if (reply.status() == 403) {
      // The agent read the file with the job's user's rights, and that user may not read it.
      throw ApiError.forbidden(
          "the agent refused job "
              + id
              + "'s "
              + stream
              + ": "
              + new String(reply.body(), java.nio.charset.StandardCharsets.UTF_8).strip());
    }
    if (reply.status() == 400) {
      throw ApiError.invalid(
          "offset",
          "the agent refused the offset "
              + offset
              + ": "
              + new String(reply.body(), java.nio.charset.StandardCharsets.UTF_8).strip(),
          "use the Kairos-Log-Offset of the previous reply");
    }
    if (reply.status() != 200) {
      throw new ApiError(502, "Agent error", "the agent answered " + reply.status(), null, null);
    }
    ctx.contentType("text/plain; charset=utf-8");
    ctx.header("Kairos-Log-Offset", reply.offset().orElse(Long.toString(offset)));
    ctx.header("Kairos-Log-Done", reply.done().orElse(Boolean.toString(where.done())));
    ctx.result(reply.body());
  }

  static long id(Context ctx) {
    String raw = ctx.pathParam("id");
    try {
      long id = Long.parseLong(raw);
      if (id < 1) {
        throw new NumberFormatException();
      }
      return id;
    } catch (NumberFormatException e) {
      throw ApiError.invalid(
          "id",
          "'" + Submissions.clip(raw) + "' is not a job id",
          "use the number `kairos queue` shows");
    }
  }

  static int intParam(Context ctx, String name, int dflt, int min, int max) {
    String raw = ctx.queryParam(name);
    if (raw == null) {
      return dflt;
    }
    try {
      int v = Integer.parseInt(raw.trim());
      if (v < min || v > max) {
        throw new NumberFormatException();
      }
      return v;
    } catch (NumberFormatException e) {
      throw ApiError.invalid(
          name, name + " must be an integer between " + min + " and " + max, null);
    }
  }

  static long longParam(Context ctx, String name, long dflt) {
    String raw = ctx.queryParam(name);
    if (raw == null) {
      return dflt;
    }
    try {
      long v = Long.parseLong(raw.trim());
      if (v < 0) {
        throw new NumberFormatException();
      }
      return v;
    } catch (NumberFormatException e) {
      throw ApiError.invalid(name, name + " must be a non-negative integer", null);
    }
  }
}

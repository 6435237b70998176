package io.kairos.control.api;

import com.fasterxml.jackson.core.type.TypeReference;
import io.javalin.config.JavalinConfig;
import io.javalin.http.Context;
import io.kairos.control.auth.Principal;
import io.kairos.control.state.ControlCommand.CancelJob;
import io.kairos.control.state.JobRecord;
import io.kairos.control.state.JobRequest;
import io.kairos.protocol.JobState;
import io.kairos.protocol.JobSubmission;
import io.kairos.protocol.JobView;
import io.kairos.protocol.SubmitResult;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
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

  private JobRoutes() {}

  static void register(JavalinConfig config, Services s) {
    config.routes.post("/api/v1/jobs", ctx -> submit(ctx, s));
    config.routes.get("/api/v1/jobs", ctx -> list(ctx, s));
    config.routes.get(
        "/api/v1/jobs/{id}",
        ctx -> {
          Api.user(ctx);
          long id = id(ctx);
          ctx.json(
              s.read(st -> st.job(id).map(j -> Views.job(st, j, s.scheduler())))
                  .orElseThrow(() -> ApiError.notFound("no job " + id)));
        });
    config.routes.post("/api/v1/jobs/{id}/cancel", ctx -> cancel(ctx, s));
    config.routes.get("/api/v1/jobs/{id}/logs", ctx -> logs(ctx, s));
  }

  private static void submit(Context ctx, Services s) throws InterruptedException {
    Principal who = Api.user(ctx);
    var tenancy = s.scheduler().tenancy().orElse(null);
    byte[] body = ctx.bodyAsBytes();
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
    s.read(
        st -> {
          for (int i = 0; i < requests.size(); i++) {
            String prefix = batch ? "[" + i + "]." : "";
            Submissions.checkDependencyJobs(requests.get(i), id -> st.job(id).isPresent(), prefix);
            requests.set(i, UserRoutes.withRunAs(st, s.runAs(), requests.get(i), prefix));
          }
          return null;
        });
    List<Long> ids;
    try {
      ids = s.batcher().submit(requests).get(Services.COMMIT_TIMEOUT_SEC, TimeUnit.SECONDS);
    } catch (ExecutionException | TimeoutException e) {
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

  private static int firstNonSpace(byte[] body) {
    for (byte b : body) {
      if (b != ' ' && b != '\n' && b != '\r' && b != '\t') {
        return b;
      }
    }
    return -1;
  }

  private static void list(Context ctx, Services s) {
    Api.user(ctx);
    Set<JobState> states = states(ctx.queryParam("state"));
    String user = ctx.queryParam("user");
    String queue = ctx.queryParam("queue");
    int limit = intParam(ctx, "limit", DEFAULT_LIMIT, 1, 1_000_000);
    boolean activeOnly = !states.isEmpty() && states.stream().noneMatch(JobState::isFinal);
    List<JobView> views =
        s.read(
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
              return picked.stream().map(j -> Views.job(st, j, s.scheduler())).toList();
            });
    ctx.json(views);
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
    ctx.json(s.read(st -> Views.job(st, st.job(id).orElseThrow(), s.scheduler())));
  }

  private static void logs(Context ctx, Services s) throws InterruptedException {
    Api.user(ctx);
    long id = id(ctx);
    int task = intParam(ctx, "task", 0, 0, 1 << 20);
    long offset = longParam(ctx, "offset", 0);
    String stream = ctx.queryParamAsClass("stream", String.class).getOrDefault("stdout");
    if (!stream.equals("stdout") && !stream.equals("stderr")) {
      throw ApiError.invalid("stream", "stream must be stdout or stderr", null);
    }
    record Where(String address, String token, int attempt, boolean done) {}
    Where where =
        s.read(
            st -> {
              JobRecord j = st.job(id).orElseThrow(() -> ApiError.notFound("no job " + id));
              if (j.attempt == 0 || j.placement.isEmpty()) {
                throw ApiError.conflict("job " + id + " has not started yet: no logs");
              }
              if (task >= j.placement.size()) {
                throw ApiError.invalid(
                    "task", "job " + id + " has " + j.placement.size() + " tasks", null);
              }
              String node = j.placement.get(task).node();
              var registration = st.node(node).map(n -> n.registration).orElse(null);
              if (registration == null) {
                throw ApiError.conflict("node " + node + " is gone: its logs are not reachable");
              }
              String token =
                  registration.logToken() != null ? registration.logToken() : s.joinToken();
              return new Where(registration.address(), token, j.attempt, j.state.isFinal());
            });
    URI uri =
        URI.create(
            where.address()
                + "/logs/"
                + id
                + "/"
                + where.attempt()
                + "/"
                + task
                + "?stream="
                + stream
                + "&offset="
                + offset);
    HttpResponse<byte[]> reply;
    try {
      reply =
          s.http()
              .send(
                  HttpRequest.newBuilder(uri)
                      .timeout(Duration.ofSeconds(10))
                      .header("Authorization", "Bearer " + where.token())
                      .GET()
                      .build(),
                  HttpResponse.BodyHandlers.ofByteArray());
    } catch (java.io.IOException e) {
      throw new ApiError(
          502,
          "Agent unreachable",
          "the agent holding the logs ("
              + where.address()
              + ") did not answer: "
              + e.getClass().getSimpleName()
              + (e.getMessage() == null ? "" : " " + e.getMessage()),
          null,
          "retry; if the node is gone the logs went with it");
    }
    if (reply.statusCode() == 404) {
      throw ApiError.notFound("no logs for job " + id + " task " + task + " on its node");
    }
    if (reply.statusCode() == 403) {
      // The agent read the file with the job's user's rights, and that user may not read it.
      throw ApiError.forbidden(
          "the agent refused job "
              + id
              + "'s "
              + stream
              + ": "
              + new String(reply.body(), java.nio.charset.StandardCharsets.UTF_8).strip());
    }
    if (reply.statusCode() == 400) {
      throw ApiError.invalid(
          "offset",
          "the agent refused the offset "
              + offset
              + ": "
              + new String(reply.body(), java.nio.charset.StandardCharsets.UTF_8).strip(),
          "use the Kairos-Log-Offset of the previous reply");
    }
    if (reply.statusCode() != 200) {
      throw new ApiError(
          502, "Agent error", "the agent answered " + reply.statusCode(), null, null);
    }
    ctx.contentType("text/plain; charset=utf-8");
    ctx.header(
        "Kairos-Log-Offset",
        reply.headers().firstValue("Kairos-Log-Offset").orElse(Long.toString(offset)));
    ctx.header(
        "Kairos-Log-Done",
        reply.headers().firstValue("Kairos-Log-Done").orElse(Boolean.toString(where.done())));
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

package io.kairos.control.api;

import io.javalin.config.JavalinConfig;
import io.javalin.http.Context;
import io.kairos.control.auth.Principal;
import io.kairos.control.state.CheckpointEntry;
import io.kairos.control.state.CheckpointPolicy;
import io.kairos.control.state.ControlCommand.RecordCheckpoint;
import io.kairos.control.state.ControlResult;
import io.kairos.control.state.JobRecord;
import io.kairos.control.state.TokenRecord;
import io.kairos.protocol.CheckpointList;
import io.kairos.protocol.CheckpointReport;
import io.kairos.protocol.CheckpointView;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code /api/v1/jobs/{id}/checkpoints}: a checkpointing job's complete checkpoints.
 *
 * <ul>
 *   <li>{@code POST} ({@link CheckpointReport}): the job reports one, after its manifest is
 *       written; 200 with the kept checkpoints and those now pruned ({@link CheckpointList}), 400
 *       naming the field (a path outside the job's checkpoint directory among them), 409 when the
 *       job does not declare checkpoints or does not run that attempt.
 *   <li>{@code GET}: the kept checkpoints, oldest first.
 * </ul>
 *
 * <p>Who may report: the job's own step credential ({@code KAIROS_JOB_TOKEN}, for its own attempt
 * only), its owner and admins. Who may list: whoever may read the job's private data (its owner and
 * admins by default), and the job's own credential; a checkpoint names paths in the job's private
 * directory.
 */
final class CheckpointRoutes {
  static final int MAX_PATH_CHARS = 1024;

  private CheckpointRoutes() {}

  static void register(JavalinConfig config, Services s) {
    config.routes.post("/api/v1/jobs/{id}/checkpoints", ctx -> record(ctx, s));
    config.routes.get("/api/v1/jobs/{id}/checkpoints", ctx -> list(ctx, s));
  }

  private static void list(Context ctx, Services s) {
    Principal who = Api.user(ctx);
    long id = JobRoutes.id(ctx);
    ctx.json(
        s.read(
            st -> {
              JobRecord job = st.job(id).orElseThrow(() -> ApiError.notFound("no job " + id));
              boolean allowed =
                  who.isJobScoped()
                      ? who.scopedJob() == id
                      : s.safeguards().mayRead(who, job.request);
              if (!allowed) {
                throw ApiError.forbidden(
                    "job "
                        + id
                        + "'s checkpoints are private to "
                        + job.request.user()
                        + " and admins");
              }
              return view(job, null);
            }));
  }

  private static void record(Context ctx, Services s) {
    Principal who = Api.user(ctx);
    long id = JobRoutes.id(ctx);
    CheckpointReport body = Json.read(ctx.bodyAsBytes(), CheckpointReport.class);
    var before =
        s.read(
            st -> {
              JobRecord job = st.job(id).orElseThrow(() -> ApiError.notFound("no job " + id));
              boolean allowed =
                  who.isAdmin()
                      || (who.isJobScoped()
                          ? who.scopedJob() == id
                          : who.user().equals(job.request.user()));
              if (!allowed) {
                throw ApiError.forbidden(
                    "job "
                        + id
                        + " belongs to "
                        + job.request.user()
                        + "; only they, an admin or the job itself may record its checkpoints");
              }
              return job.copy();
            });
    int attempt = attempt(body, who, before);
    CheckpointEntry entry = entry(body, attempt, s.clock().millis());
    ControlResult result = Services.check(s.commit(new RecordCheckpoint(entry.atMs(), id, entry)));
    var pruned = new ArrayList<CheckpointView>();
    for (CheckpointEntry e : before.checkpoints) {
      if (result.ids().contains(e.step())) {
        pruned.add(view(e));
      }
    }
    ctx.json(
        s.read(
            st -> view(st.job(id).orElseThrow(() -> ApiError.notFound("no job " + id)), pruned)));
  }

  /** The attempt reported: a step credential's own; else the body's, else the job's current. */
  private static int attempt(CheckpointReport body, Principal who, JobRecord job) {
    if (who.isJobScoped()) {
      int own = TokenRecord.scopedAttempt(who.scope());
      Submissions.check(
          body.attempt() == null || body.attempt() == own,
          "attempt",
          "this job's credential is for attempt " + own + ", not " + body.attempt(),
          "leave attempt out, or give KAIROS_ATTEMPT");
      return own;
    }
    return body.attempt() == null ? job.attempt : body.attempt();
  }

  /** The report as the log records it; 400 naming the field for what cannot be a checkpoint. */
  static CheckpointEntry entry(CheckpointReport b, int attempt, long atMs) {
    Submissions.check(
        b.step() != null && b.step() >= 0,
        "step",
        "step must be 0 or more, got " + b.step(),
        "give the training step the checkpoint holds");
    Submissions.check(
        b.sizeBytes() == null || b.sizeBytes() >= 0,
        "sizeBytes",
        "sizeBytes must be 0 or more, got " + b.sizeBytes(),
        "give the checkpoint's size in bytes");
    inside(b.manifest(), "manifest");
    List<String> files = b.files() == null ? List.of() : b.files();
    Submissions.check(
        files.size() <= CheckpointReport.MAX_FILES,
        "files",
        "at most " + CheckpointReport.MAX_FILES + " files, got " + files.size(),
        null);
    for (int i = 0; i < files.size(); i++) {
      inside(files.get(i), "files[" + i + "]");
    }
    return new CheckpointEntry(
        b.step(),
        attempt,
        atMs,
        b.sizeBytes() == null ? 0 : b.sizeBytes(),
        b.manifest(),
        files.size());
  }

  /**
   * Refuses a path that leaves the job's checkpoint directory: it must be relative, without "." or
   * ".." parts, empty parts, backslashes or control characters.
   */
  static void inside(String path, String field) {
    boolean ok = path != null && !path.isEmpty() && path.length() <= MAX_PATH_CHARS;
    if (ok) {
      ok = !path.startsWith("/") && path.indexOf('\\') < 0;
      for (int i = 0; ok && i < path.length(); i++) {
        ok = !Character.isISOControl(path.charAt(i));
      }
      for (String part : path.split("/", -1)) {
        ok &= !part.isEmpty() && !part.equals(".") && !part.equals("..");
      }
    }
    Submissions.check(
        ok,
        field,
        field
            + " must be a path inside the job's checkpoint directory, got '"
            + (path == null ? "null" : Submissions.clip(path))
            + "'",
        "name it relative to KAIROS_CHECKPOINT_DIR, e.g. step-00000120/MANIFEST.json");
  }

  static CheckpointList view(JobRecord job, List<CheckpointView> pruned) {
    CheckpointPolicy p = job.request.checkpoint();
    var kept = new ArrayList<CheckpointView>(job.checkpoints.size());
    for (CheckpointEntry e : job.checkpoints) {
      kept.add(view(e));
    }
    return new CheckpointList(
        job.id,
        p == null ? null : p.signal(),
        p == null ? 0 : p.timeoutSec(),
        p == null ? 0 : p.everySec(),
        p == null ? 0 : p.keep(),
        kept,
        pruned);
  }

  static CheckpointView view(CheckpointEntry e) {
    return new CheckpointView(
        e.step(), e.attempt(), Views.time(e.atMs()), e.sizeBytes(), e.manifest(), e.files());
  }
}

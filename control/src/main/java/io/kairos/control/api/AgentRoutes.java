package io.kairos.control.api;

import io.javalin.config.JavalinConfig;
import io.javalin.http.Context;
import io.kairos.protocol.GpuDevice;
import io.kairos.protocol.agent.Heartbeat;
import io.kairos.protocol.agent.Registration;
import java.util.regex.Pattern;

/**
 * {@code /api/v1/agents}: register and heartbeat, join token only, leader only. A follower answers
 * 421 with the leader's base URL in {@code Kairos-Leader}, and the agent moves there.
 */
final class AgentRoutes {
  private static final Pattern NODE_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,62}");

  private AgentRoutes() {}

  static void register(JavalinConfig config, Services s) {
    config.routes.post(
        "/api/v1/agents/register",
        ctx -> {
          Api.agent(ctx);
          leaderOnly(ctx, s);
          Registration r = validate(Json.read(ctx.bodyAsBytes(), Registration.class));
          ctx.json(s.agents().register(r));
        });
    config.routes.post(
        "/api/v1/agents/heartbeat",
        ctx -> {
          Api.agent(ctx);
          leaderOnly(ctx, s);
          Heartbeat hb = Json.read(ctx.bodyAsBytes(), Heartbeat.class);
          if (hb.node() == null || hb.tasks() == null) {
            throw ApiError.invalid(
                hb.node() == null ? "node" : "tasks", "node and tasks are required", null);
          }
          for (int i = 0; i < hb.tasks().size(); i++) {
            var t = hb.tasks().get(i);
            if (t == null || t.status() == null) {
              throw ApiError.invalid(
                  "tasks[" + i + "]", "each task needs a jobId, attempt, task and status", null);
            }
          }
          ctx.json(s.agents().heartbeat(hb));
        });
  }

  static void leaderOnly(Context ctx, Services s) {
    if (!s.replica().isLeader()) {
      s.replica().leaderUrl().ifPresent(url -> ctx.header("Kairos-Leader", url));
      throw new ApiError(
          421,
          "Not the leader",
          "this replica does not lead; agents and kube-scheduler talk to the leader",
          null,
          "retry at the URL in the Kairos-Leader header");
    }
  }

  static Registration validate(Registration r) {
    Submissions.check(
        r.node() != null && NODE_NAME.matcher(r.node()).matches(),
        "node",
        "node name must be 1-63 letters, digits, '.', '_' or '-'",
        "pass --node-name");
    Submissions.check(
        r.address() != null && r.address().matches("https?://[^\\s/]+"),
        "address",
        "address must be the agent's base URL, e.g. http://10.0.0.5:7101",
        null);
    Submissions.check(
        r.gpus() != null && r.gpus().size() <= 64, "gpus", "at most 64 GPUs per node", null);
    for (int i = 0; i < r.gpus().size(); i++) {
      GpuDevice g = r.gpus().get(i);
      Submissions.check(
          g != null && g.index() == i && g.model() != null && g.memoryBytes() >= 0,
          "gpus[" + i + "]",
          "GPUs must be listed by index 0..n-1, each with a model and memory >= 0",
          null);
    }
    Submissions.check(
        r.cpus() >= 0 && r.memoryBytes() >= 0, "cpus", "cpus and memory must be >= 0", null);
    Submissions.check(
        r.zone() != null && r.block() != null && r.rack() != null,
        "rack",
        "zone, block and rack are required",
        null);
    Submissions.check(
        r.runsOnlyAs() == null
            || (!r.runsOnlyAs().isBlank()
                && r.runsOnlyAs().length() <= 64
                && r.runsOnlyAs().chars().noneMatch(c -> c <= ' ' || c == ':')),
        "runsOnlyAs",
        "runsOnlyAs must be the Unix account the agent runs as, or absent for a root agent",
        null);
    int gpus = r.gpus().size();
    Submissions.check(
        gpus == 0 || (r.nvlinkDomainSize() >= 1 && gpus % r.nvlinkDomainSize() == 0),
        "nvlinkDomainSize",
        "nvlinkDomainSize must divide the GPU count " + gpus,
        null);
    return r;
  }
}

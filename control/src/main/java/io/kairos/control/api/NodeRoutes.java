package io.kairos.control.api;

import io.javalin.config.JavalinConfig;
import io.javalin.http.Context;
import io.kairos.control.state.ControlCommand.DrainNode;
import io.kairos.control.state.ControlCommand.ResumeNode;
import io.kairos.control.state.ControlCommand.ReturnGpu;

/**
 * {@code /api/v1/nodes} (list, drain, resume, a GPU's return to service, reset), {@code
 * /api/v1/queues} and {@code /api/v1/accounts}. A reset forgets a node's credential and fences its
 * agent: the name is then registered again with a join token (an agent whose data, and so
 * credential, was lost).
 */
final class NodeRoutes {
  /** The body of a drain: why (shown in {@code kairos nodes}). */
  record DrainRequest(String reason) {}

  private NodeRoutes() {}

  static void register(JavalinConfig config, Services s) {
    config.routes.get(
        "/api/v1/nodes",
        ctx -> {
          Api.user(ctx);
          ctx.json(
              s.read(
                  st ->
                      st.nodes().stream()
                          .map(
                              n ->
                                  Views.node(
                                      st,
                                      n,
                                      s.agents().lastSeen(n.name),
                                      s.agents().liveness(n.name)))
                          .toList()));
        });
    config.routes.post(
        "/api/v1/nodes/{name}/drain",
        ctx -> {
          Api.admin(ctx);
          String name = name(ctx, s);
          String reason = null;
          if (ctx.bodyAsBytes().length > 0) {
            reason = Json.read(ctx.bodyAsBytes(), DrainRequest.class).reason();
            if (reason != null
                && (reason.length() > 256 || reason.chars().anyMatch(Character::isISOControl))) {
              throw ApiError.invalid(
                  "reason", "reason must be at most 256 printable characters", null);
            }
          }
          Services.check(s.commit(new DrainNode(s.clock().millis(), name, reason)));
          reply(ctx, s, name);
        });
    config.routes.post(
        "/api/v1/nodes/{name}/resume",
        ctx -> {
          Api.admin(ctx);
          String name = name(ctx, s);
          Services.check(s.commit(new ResumeNode(s.clock().millis(), name)));
          reply(ctx, s, name);
        });
    config.routes.post(
        "/api/v1/nodes/{name}/gpus/{gpu}/resume",
        ctx -> {
          Api.admin(ctx);
          String name = name(ctx, s);
          int gpu = gpu(ctx, s, name);
          Services.check(s.commit(new ReturnGpu(s.clock().millis(), name, gpu)));
          reply(ctx, s, name);
        });
    config.routes.post(
        "/api/v1/nodes/{name}/reset",
        ctx -> {
          Api.admin(ctx);
          String name = name(ctx, s);
          Services.check(s.agents().reset(name));
          reply(ctx, s, name);
        });
    config.routes.get(
        "/api/v1/queues",
        ctx -> {
          Api.user(ctx);
          var tenancy = s.scheduler().tenancy().orElse(null);
          ctx.json(s.read(st -> QueueViews.queues(st, tenancy)));
        });
    config.routes.get(
        "/api/v1/accounts",
        ctx -> {
          Api.user(ctx);
          var tenancy = s.scheduler().tenancy().orElse(null);
          ctx.json(QueueViews.accounts(tenancy, s.scheduler().fairShare(), s.scheduler().usage()));
        });
  }

  private static String name(Context ctx, Services s) {
    String name = ctx.pathParam("name");
    if (s.read(st -> st.node(name)).isEmpty()) {
      throw ApiError.notFound(
          "no node named '" + Submissions.clip(name) + "'; `kairos nodes` lists them");
    }
    return name;
  }

  /** The {@code gpu} path parameter: an index of one of the node's GPUs. */
  private static int gpu(Context ctx, Services s, String name) {
    int count =
        s.read(
            st ->
                st.node(name)
                    .map(n -> n.registration == null ? 0 : n.registration.gpus().size())
                    .orElse(0));
    String raw = ctx.pathParam("gpu");
    int gpu;
    try {
      gpu = Integer.parseInt(raw);
    } catch (NumberFormatException e) {
      gpu = -1;
    }
    if (gpu < 0 || gpu >= count) {
      throw ApiError.invalid(
          "gpu",
          "gpu must be the index of one of node "
              + Submissions.clip(name)
              + "'s "
              + count
              + " GPUs (0 to "
              + (count - 1)
              + "), got '"
              + Submissions.clip(raw)
              + "'",
          null);
    }
    return gpu;
  }

  private static void reply(Context ctx, Services s, String name) {
    ctx.json(
        s.read(
            st ->
                Views.node(
                    st,
                    st.node(name).orElseThrow(),
                    s.agents().lastSeen(name),
                    s.agents().liveness(name))));
  }
}

package io.kairos.control.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import io.javalin.config.JavalinConfig;
import io.javalin.http.Context;
import io.kairos.control.k8s.ExtenderInputException;
import io.kairos.control.k8s.ExtenderJson;
import io.kairos.control.k8s.ExtenderTypes.ExtenderArgs;
import io.kairos.control.k8s.ExtenderTypes.ExtenderBindingArgs;
import io.kairos.control.k8s.ExtenderTypes.ExtenderPreemptionArgs;
import java.util.function.Supplier;

/**
 * {@code /api/v1/k8s-extender/{filter,prioritize,bind,preempt}}: the verbs kube-scheduler calls on
 * an extender ({@code urlPrefix} + "/" + verb). The extender's own credential only, and nothing
 * else takes these verbs: a client certificate of the cluster CA with the extender role
 * (kube-scheduler's {@code tlsConfig.certFile}/{@code keyFile}; {@code kairos token create
 * --extender --cert-out DIR}) or an extender bearer token in the Authorization header (a proxy in
 * front of kube-scheduler); never a token in the query string. Leader only (the ledger is the
 * leader's). Bodies are {@code k8s.io/kube-scheduler/extender/v1} types; bad bodies are 400
 * problems naming the field, while outcomes kube-scheduler must see (a failed binding) are in the
 * reply's {@code Error}, as the protocol expects.
 */
final class K8sExtenderRoutes {
  static final String PREFIX = "/api/v1/k8s-extender/";

  private K8sExtenderRoutes() {}

  static void register(JavalinConfig config, Services s) {
    config.routes.post(
        PREFIX + "filter",
        ctx -> {
          ExtenderArgs args = read(ctx, s, ExtenderArgs.class);
          reply(ctx, call(() -> s.k8s().filter(args)));
        });
    config.routes.post(
        PREFIX + "prioritize",
        ctx -> {
          ExtenderArgs args = read(ctx, s, ExtenderArgs.class);
          reply(ctx, call(() -> s.k8s().prioritize(args)));
        });
    config.routes.post(
        PREFIX + "bind",
        ctx -> {
          ExtenderBindingArgs args = read(ctx, s, ExtenderBindingArgs.class);
          reply(ctx, call(() -> s.k8s().bind(args)));
        });
    config.routes.post(
        PREFIX + "preempt",
        ctx -> {
          ExtenderPreemptionArgs args = read(ctx, s, ExtenderPreemptionArgs.class);
          reply(ctx, call(() -> s.k8s().preempt(args)));
        });
  }

  /** Checks the caller and leadership, then parses the body (a JSON object, never null). */
  private static <T> T read(Context ctx, Services s, Class<T> type) {
    Api.extender(ctx);
    AgentRoutes.leaderOnly(ctx, s);
    T value = Json.read(ExtenderJson.MAPPER, ctx.bodyAsBytes(), type);
    if (value == null) {
      throw ApiError.invalid(null, "the body is null", "send a JSON object");
    }
    return value;
  }

  private static <T> T call(Supplier<T> verb) {
    try {
      return verb.get();
    } catch (ExtenderInputException e) {
      throw ApiError.invalid(e.field(), e.getMessage(), e.fix());
    }
  }

  private static void reply(Context ctx, Object body) throws JsonProcessingException {
    ctx.contentType("application/json").result(ExtenderJson.MAPPER.writeValueAsString(body));
  }
}

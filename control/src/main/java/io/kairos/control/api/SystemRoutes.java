package io.kairos.control.api;

import io.javalin.config.JavalinConfig;
import io.kairos.control.auth.Principal;
import io.kairos.control.auth.Tokens;
import io.kairos.control.state.ControlCommand.AddToken;
import io.kairos.control.state.TokenRecord;
import io.kairos.protocol.ClusterInfo;
import io.kairos.protocol.TokenCreated;
import io.kairos.protocol.TokenRequest;
import io.kairos.protocol.WhoAmI;
import java.io.IOException;
import java.io.InputStream;
import java.util.regex.Pattern;

/**
 * Health, readiness, metrics, the OpenAPI document, the cluster CA's certificate, cluster info,
 * whoami and tokens.
 */
final class SystemRoutes {
  private static final Pattern USER = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._@-]{0,63}");

  private SystemRoutes() {}

  static void register(JavalinConfig config, Services s) {
    config.routes.get("/healthz", ctx -> ctx.contentType("text/plain").result("ok\n"));
    config.routes.get(
        "/readyz",
        ctx -> {
          var why = s.replica().notReady();
          ctx.status(why.isEmpty() ? 200 : 503)
              .contentType("text/plain")
              .result(why.map(w -> "not ready: " + w + "\n").orElse("ready\n"));
        });
    config.routes.get(
        "/metrics",
        ctx ->
            ctx.contentType("text/plain; version=0.0.4; charset=utf-8")
                .result(s.meters().scrape()));
    config.routes.get(
        "/api/v1/openapi.json",
        ctx -> {
          try (InputStream in = SystemRoutes.class.getResourceAsStream("/openapi.json")) {
            if (in == null) {
              throw ApiError.notFound("the OpenAPI document is not packaged");
            }
            ctx.contentType("application/json").result(in.readAllBytes());
          } catch (IOException e) {
            throw new IllegalStateException(e);
          }
        });
    config.routes.get(
        "/api/v1/ca.pem",
        ctx -> {
          String pem =
              s.caPem()
                  .orElseThrow(
                      () ->
                          ApiError.notFound(
                              "this controller runs without a cluster CA (--insecure)"));
          ctx.contentType("application/x-pem-file").result(pem);
        });
    config.routes.get(
        "/api/v1/whoami",
        ctx -> {
          Principal p = Api.principal(ctx);
          ctx.json(new WhoAmI(p.user(), p.isAdmin()));
        });
    config.routes.get(
        "/api/v1/cluster",
        ctx -> {
          Api.user(ctx);
          var r = s.replica();
          ctx.json(
              new ClusterInfo(
                  r.urlOf(r.self()),
                  r.leaderUrl().orElse(null),
                  r.isLeader(),
                  r.peers().stream().map(r::urlOf).toList(),
                  s.scheduler().policy().name(),
                  r.appliedIndex()));
        });
    config.routes.post(
        "/api/v1/tokens",
        ctx -> {
          Api.admin(ctx);
          TokenRequest req = Json.read(ctx.bodyAsBytes(), TokenRequest.class);
          if (req.user() == null || !USER.matcher(req.user()).matches()) {
            throw ApiError.invalid(
                "user",
                "user must be 1-64 letters, digits, '.', '_', '@' or '-'",
                "pass --user NAME");
          }
          boolean admin = Boolean.TRUE.equals(req.admin());
          String token = Tokens.generate(admin ? "kadm" : "kusr");
          var record =
              new TokenRecord(
                  Tokens.hash(token),
                  req.user(),
                  admin ? TokenRecord.ADMIN : TokenRecord.USER,
                  s.clock().millis());
          Services.check(s.commit(new AddToken(s.clock().millis(), record)));
          ctx.status(201).json(new TokenCreated(token, req.user(), admin));
        });
  }
}

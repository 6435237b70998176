package io.kairos.control.api;

import io.javalin.Javalin;
import io.javalin.http.Context;
import io.javalin.http.HttpStatus;
import io.kairos.control.auth.Authenticator;
import io.kairos.control.auth.Principal;
import io.kairos.control.dashboard.Dashboard;
import io.kairos.protocol.Problem;
import java.security.cert.X509Certificate;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds the Javalin app: routes per resource, authentication before every {@code /api/v1} route,
 * and one mapper from exceptions to {@code application/problem+json}. A 500 means a bug: it is
 * logged with a correlation id that the reply carries, and never shows a stack trace.
 */
public final class Api {
  private static final Logger LOG = LoggerFactory.getLogger(Api.class);
  static final String PRINCIPAL = "kairos.principal";

  /** Bodies above this are refused with 413 before they are read. */
  public static final long MAX_BODY_BYTES = 16L << 20;

  private Api() {}

  public static Javalin create(
      Services services,
      Authenticator auth,
      java.util.function.Consumer<io.javalin.config.JavalinConfig> extra) {
    return Javalin.create(
        config -> {
          config.startup.showJavalinBanner = false;
          config.startup.showOldJavalinVersionWarning = false;
          config.concurrency.useVirtualThreads = true;
          config.http.maxRequestSize = MAX_BODY_BYTES;
          config.http.prefer405over404 = true;
          config.http.defaultContentType = "application/json";
          extra.accept(config);
          config.routes.before(Api::refuseDeclaredOversizeBody);
          config.routes.before("/api/v1/*", ctx -> authenticate(ctx, auth));
          JobRoutes.register(config, services);
          StepRoutes.register(config, services);
          CheckpointRoutes.register(config, services);
          NodeRoutes.register(config, services);
          AgentRoutes.register(config, services);
          SystemRoutes.register(config, services);
          TokenRoutes.register(config, services);
          UserRoutes.register(config, services);
          EventRoutes.register(config, services);
          LimitRoutes.register(config, services);
          ConfigRoutes.register(config, services);
          ReplicaRoutes.register(config, services);
          AccountingRoutes.register(config, services);
          Dashboard.configure(config);
          K8sExtenderRoutes.register(config, services);
          config.routes.exception(ApiError.class, (e, ctx) -> problem(ctx, e));
          config.routes.exception(
              io.javalin.http.HttpResponseException.class,
              (e, ctx) ->
                  problem(
                      ctx,
                      new ApiError(
                          e.getStatus(), titleOf(e.getStatus()), e.getMessage(), null, null)));
          config.routes.exception(
              Exception.class,
              (e, ctx) -> {
                if (endedEarly(e)) {
                  problem(
                      ctx,
                      ApiError.invalid(
                          null,
                          "the request body ended before the length its Content-Length announced",
                          "send the whole body"));
                  return;
                }
                String id = UUID.randomUUID().toString();
                LOG.error("internal error {} on {} {}", id, ctx.method(), ctx.path(), e);
                ctx.status(500)
                    .contentType("application/problem+json")
                    .json(
                        new Problem(
                            "about:blank",
                            "Internal error",
                            500,
                            "the controller failed to handle this request; its log names the error",
                            null,
                            null,
                            id));
              });
          config.routes.error(
              404,
              ctx -> {
                if (ctx.result() == null || ctx.result().isEmpty()) {
                  problem(ctx, ApiError.notFound("no endpoint " + ctx.method() + " " + ctx.path()));
                }
              });
          config.routes.error(
              405,
              ctx -> {
                if (ctx.result() == null || ctx.result().isEmpty()) {
                  problem(
                      ctx,
                      new ApiError(
                          405,
                          "Method not allowed",
                          ctx.method() + " is not allowed on " + ctx.path(),
                          null,
                          null));
                }
              });
          config.routes.error(
              413,
              ctx -> {
                if (ctx.result() == null || ctx.result().isEmpty()) {
                  problem(
                      ctx,
                      new ApiError(
                          413,
                          "Body too large",
                          "the request body is larger than " + (MAX_BODY_BYTES >> 20) + " MiB",
                          null,
                          "send fewer jobs per request"));
                }
              });
        });
  }

  /**
   * Refuses a body whose declared length is over the limit before reading any of it (Javalin itself
   * reads up to the limit first, so a client announcing 100 MB would wait).
   */
  private static void refuseDeclaredOversizeBody(Context ctx) {
    if (ctx.req().getContentLengthLong() > MAX_BODY_BYTES) {
      throw new ApiError(
          413,
          "Body too large",
          "the request body is larger than " + (MAX_BODY_BYTES >> 20) + " MiB",
          null,
          "send fewer jobs per request");
    }
  }

  /** A client that closed its side before sending the body it announced: its error, not ours. */
  private static boolean endedEarly(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof java.io.EOFException) {
        return true;
      }
    }
    return false;
  }

  private static String titleOf(int status) {
    return switch (status) {
      case 400 -> "Invalid request";
      case 404 -> "Not found";
      case 405 -> "Method not allowed";
      case 413 -> "Body too large";
      case 429 -> "Limit reached";
      default -> "Request refused";
    };
  }

  /** Where Jetty puts a TLS client's verified certificate chain. */
  static final String CLIENT_CERTIFICATES = "jakarta.servlet.request.X509Certificate";

  private static void authenticate(Context ctx, Authenticator auth) {
    if (ctx.path().equals("/api/v1/openapi.json") || ctx.path().equals("/api/v1/ca.pem")) {
      return; // public: the CA certificate is what a new agent checks its pin against
    }
    if (ctx.queryParam("token") != null) {
      // URLs end up in access logs, proxies' logs and shell histories.
      throw ApiError.unauthorized(
          "a credential is never taken from the query string: send it in the Authorization"
              + " header, or (kube-scheduler) as a TLS client certificate"
              + " (`kairos token create --extender --cert-out DIR`)");
    }
    X509Certificate[] chain =
        ctx.req().getAttribute(CLIENT_CERTIFICATES) instanceof X509Certificate[] c ? c : null;
    switch (auth.authenticate(ctx.header("Authorization"), chain)) {
      case Authenticator.Verdict.Accepted(Principal who) -> ctx.attribute(PRINCIPAL, who);
      case Authenticator.Verdict.Refused(String why) -> throw ApiError.unauthorized(why);
    }
    Principal who = ctx.attribute(PRINCIPAL);
    if (!io.kairos.control.auth.JobScope.allows(who, ctx.method().name(), ctx.path())) {
      throw ApiError.forbidden(
          "a job's step credential reaches only job "
              + who.scopedJob()
              + "'s steps and logs, not "
              + ctx.method()
              + " "
              + ctx.path());
    }
  }

  static Principal principal(Context ctx) {
    Principal p = ctx.attribute(PRINCIPAL);
    if (p == null) {
      throw ApiError.unauthorized("this endpoint needs a bearer token");
    }
    return p;
  }

  /** Users and admins; join tokens, nodes and the extender do not reach the user API. */
  static Principal user(Context ctx) {
    Principal p = principal(ctx);
    if (!p.isUser()) {
      throw ApiError.forbidden(p.describe() + " cannot use the user API");
    }
    return p;
  }

  static Principal admin(Context ctx) {
    Principal p = principal(ctx);
    if (!p.isAdmin()) {
      throw ApiError.forbidden(
          "this needs an admin token; " + p.describe() + " ('" + p.user() + "') is not an admin's");
    }
    return p;
  }

  /** A join token or a node's own credential: what a registration takes. */
  static Principal joinOrNode(Context ctx) {
    Principal p = principal(ctx);
    if (!p.isJoin() && !p.isNode()) {
      throw ApiError.forbidden(
          "registration takes a join token or the node's own credential, not " + p.describe());
    }
    return p;
  }

  /** A node, by its own credential. */
  static Principal node(Context ctx) {
    Principal p = principal(ctx);
    if (!p.isNode()) {
      throw ApiError.forbidden(
          "this endpoint takes a node's own credential (a node gets it when it registers), not "
              + p.describe());
    }
    return p;
  }

  /** The kube-scheduler extender's credential, and nothing else. */
  static Principal extender(Context ctx) {
    Principal p = principal(ctx);
    if (!p.isExtender()) {
      throw ApiError.forbidden(
          "the extender's verbs take the extender's own credential"
              + " (`kairos token create --extender`), not "
              + p.describe());
    }
    return p;
  }

  static void problem(Context ctx, ApiError e) {
    ctx.status(HttpStatus.forStatus(e.status()))
        .contentType("application/problem+json")
        .result(
            Json.write(
                new Problem(
                    "/docs/api#" + slug(e.title()),
                    e.title(),
                    e.status(),
                    e.getMessage(),
                    e.field(),
                    e.fix(),
                    null,
                    e.limit(),
                    e.limitValue())));
    if (e.status() == 401) {
      ctx.header("WWW-Authenticate", "Bearer realm=\"kairos\"");
    }
    if (e.retryAfterSec() > 0) {
      ctx.header("Retry-After", Long.toString(e.retryAfterSec()));
    }
  }

  private static String slug(String title) {
    return title.toLowerCase(java.util.Locale.ROOT).replace(' ', '-');
  }
}

package io.kairos.control.api;

import io.javalin.config.JavalinConfig;
import io.kairos.control.auth.RunAsPolicy;
import io.kairos.control.state.ControlCommand.SetUser;
import io.kairos.control.state.ControlState;
import io.kairos.control.state.JobRequest;
import io.kairos.control.state.TokenRecord;
import io.kairos.control.state.UserRecord;
import io.kairos.protocol.UserUpdate;
import io.kairos.protocol.UserView;
import java.util.List;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * {@code /api/v1/users}: the user table, which maps Kairos users to the Unix accounts their jobs
 * run as (admins only), and the rule that gives a new job its account at submission.
 */
final class UserRoutes {
  private static final Pattern USER = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._@-]{0,63}");

  private UserRoutes() {}

  static void register(JavalinConfig config, Services s) {
    config.routes.get(
        "/api/v1/users",
        ctx -> {
          Api.admin(ctx);
          ctx.json(s.read(st -> list(st, s.runAs())));
        });
    config.routes.put(
        "/api/v1/users/{name}",
        ctx -> {
          Api.admin(ctx);
          String name = ctx.pathParam("name");
          Submissions.check(
              USER.matcher(name).matches(),
              "name",
              "'" + Submissions.clip(name) + "' is not a valid user name",
              "name the user as their tokens do: 1-64 letters, digits, '.', '_', '@' or '-'");
          UserUpdate update = Json.read(ctx.bodyAsBytes(), UserUpdate.class);
          String account = update == null ? null : update.unixUser();
          Submissions.check(
              account != null && !account.isEmpty(),
              "unixUser",
              "unixUser is required",
              "give the Unix account the user's jobs run as, e.g. {\"unixUser\": \"alice\"}");
          Submissions.check(
              RunAsPolicy.isAccount(account),
              "unixUser",
              "'" + Submissions.clip(account) + "' is not a Unix account name",
              "use letters, digits, '.', '_', '@' or '-' (at most 64), not all digits");
          Submissions.check(
              !s.runAs().refuses(account),
              "unixUser",
              "jobs may not run as root on this cluster",
              "map the user to an unprivileged account (the controller refuses root jobs unless"
                  + " started with --allow-root-jobs)");
          Services.check(s.commit(new SetUser(s.clock().millis(), new UserRecord(name, account))));
          ctx.json(new UserView(name, account, true));
        });
  }

  /**
   * Every user the controller knows of, by name: those holding a token and those with a row in the
   * table, each with the account their jobs run as.
   */
  static List<UserView> list(ControlState st, RunAsPolicy runAs) {
    var out = new TreeMap<String, UserView>();
    for (TokenRecord t : st.tokens()) {
      if (!t.role().equals(TokenRecord.AGENT)) {
        out.put(
            t.user(), new UserView(t.user(), runAs.accountOf(t.user(), st.user(t.user())), false));
      }
    }
    for (UserRecord u : st.users()) {
      out.put(u.name(), new UserView(u.name(), u.unixUser(), true));
    }
    return List.copyOf(out.values());
  }

  /**
   * The request as the log records it: with the Unix account its user's jobs run as (the user
   * table, else the same name, else for the bootstrap admin the server's setting). Refused (400,
   * naming the user and the setting) when that is root on a cluster that refuses root jobs, or not
   * an account name at all.
   */
  static JobRequest withRunAs(ControlState st, RunAsPolicy runAs, JobRequest r, String prefix) {
    String account = runAs.accountOf(r.user(), st.user(r.user()));
    Submissions.check(
        RunAsPolicy.isAccount(account),
        prefix + "user",
        "user '" + r.user() + "' has no Unix account to run as ('" + account + "' is not one)",
        "an admin maps the user to an account: kairos users set " + r.user() + " --unix-user NAME");
    Submissions.check(
        !runAs.refuses(account),
        prefix + "user",
        "user '"
            + r.user()
            + "' runs as root, and this controller refuses root jobs (--allow-root-jobs is off)",
        "an admin maps the user to an unprivileged account (kairos users set "
            + r.user()
            + " --unix-user NAME), or starts the controller with --allow-root-jobs (a single-user"
            + " machine only)");
    return r.withRunAs(account);
  }
}

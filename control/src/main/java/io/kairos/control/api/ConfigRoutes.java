package io.kairos.control.api;

import com.github.difflib.DiffUtils;
import com.github.difflib.UnifiedDiffUtils;
import io.javalin.config.JavalinConfig;
import io.kairos.config.Tenancy;
import io.kairos.config.TenancyYaml;
import io.kairos.control.auth.Principal;
import io.kairos.control.auth.Tokens;
import io.kairos.control.state.ConfigVersion;
import io.kairos.control.state.ControlCommand.ApplyConfig;
import io.kairos.control.state.ControlResult;
import io.kairos.control.state.ControlState;
import io.kairos.control.state.JobRecord;
import io.kairos.core.tenancy.QueueSpec;
import io.kairos.protocol.ConfigChange;
import io.kairos.protocol.ConfigUpdate;
import io.kairos.protocol.ConfigView;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;

/**
 * {@code /api/v1/config}: the site's configuration (the tenancy document: queues, cohorts, quotas,
 * priority classes, accounts, scheduling settings) through the log ({@link ApplyConfig}), so every
 * replica decides from the same one and a change needs no restart. Admins only: the document names
 * every account and its members. A new document is validated whole before it is proposed, and
 * diffed against the one in force.
 */
final class ConfigRoutes {
  static final String REPLICATED = "replicated";
  static final String STARTUP = "startup";
  static final String NONE = "none";

  private ConfigRoutes() {}

  static void register(JavalinConfig config, Services s) {
    config.routes.get(
        "/api/v1/config",
        ctx -> {
          Api.admin(ctx);
          String asked = ctx.queryParam("version");
          if (asked == null) {
            ctx.json(current(s));
            return;
          }
          long version = version(asked);
          ConfigVersion v =
              s.read(ControlState::configHistory).stream()
                  .filter(c -> c.version() == version)
                  .findFirst()
                  .orElseThrow(
                      () ->
                          ApiError.notFound(
                              "no configuration version "
                                  + version
                                  + " is kept; `kairos config history` lists those that are"));
          ctx.json(view(v, true));
        });
    config.routes.get(
        "/api/v1/config/history",
        ctx -> {
          Api.admin(ctx);
          ctx.json(
              s.read(ControlState::configHistory).reversed().stream()
                  .map(v -> view(v, false))
                  .toList());
        });
    config.routes.post(
        "/api/v1/config",
        ctx -> {
          Principal who = Api.admin(ctx);
          ConfigUpdate update = Json.read(ctx.bodyAsBytes(), ConfigUpdate.class);
          ctx.json(apply(s, who, update));
        });
  }

  private static ConfigChange apply(Services s, Principal who, ConfigUpdate u) {
    if (u == null || u.yaml() == null) {
      throw ApiError.invalid(
          "yaml", "the document is missing", "send {\"yaml\": \"<the tenancy file's text>\"}");
    }
    if (u.yaml().getBytes(StandardCharsets.UTF_8).length > ConfigVersion.MAX_BYTES) {
      throw ApiError.invalid(
          "yaml",
          "the document is larger than " + ConfigVersion.MAX_BYTES + " bytes",
          "split out what is not configuration (comments, unused queues)");
    }
    if (u.expectedVersion() != null && u.expectedVersion() < 0) {
      throw ApiError.invalid(
          "expectedVersion",
          "must be 0 or more, got " + u.expectedVersion(),
          "give the version `kairos config show` printed, or leave it out");
    }
    Tenancy next;
    try {
      next = TenancyYaml.parse(u.yaml(), "yaml");
    } catch (TenancyYaml.InvalidConfig e) {
      throw ApiError.invalid(
          "yaml",
          "the configuration is not valid:\n" + e.getMessage(),
          "correct the lines named above (docs/tenancy.md describes every key)");
    }
    Optional<Tenancy> before = s.scheduler().tenancy();
    String sha = Tokens.hash(u.yaml());
    record Now(Optional<ConfigVersion> config, long orphans) {}
    TreeSet<String> nextQueues = queues(Optional.of(next));
    Now now = s.read(st -> new Now(st.config(), liveJobsOutside(st, nextQueues)));
    long from = now.config().map(ConfigVersion::version).orElse(0L);
    String oldText = now.config().map(ConfigVersion::yaml).orElse("");
    boolean changed = now.config().map(c -> !c.sha256().equals(sha)).orElse(true);
    TreeSet<String> old = queues(before);
    var added = new ArrayList<>(nextQueues);
    added.removeAll(old);
    var removed = new ArrayList<>(old);
    removed.removeAll(nextQueues);
    String diff = changed ? diff(oldText, u.yaml(), from) : "";
    if (!changed || Boolean.TRUE.equals(u.dryRun())) {
      return new ConfigChange(from, from, changed, false, diff, added, removed, now.orphans());
    }
    long expected = u.expectedVersion() == null ? -1 : u.expectedVersion();
    ControlResult r =
        s.commit(
            new ApplyConfig(
                s.clock().millis(),
                expected,
                u.yaml(),
                sha,
                who.user(),
                Boolean.TRUE.equals(u.force())));
    if (r.status() == 400) {
      throw ApiError.invalid("yaml", r.error(), "correct the document");
    }
    Services.check(r);
    long version = r.ids().getFirst();
    return new ConfigChange(from, version, true, true, diff, added, removed, now.orphans());
  }

  /** Pending and running jobs whose queue is not one of {@code queues}. */
  private static long liveJobsOutside(ControlState st, TreeSet<String> queues) {
    long n = 0;
    for (JobRecord j : st.activeJobs()) {
      String q = j.request.queue();
      if (q != null && !queues.contains(q)) {
        n++;
      }
    }
    return n;
  }

  private static TreeSet<String> queues(Optional<Tenancy> t) {
    var out = new TreeSet<String>();
    t.ifPresent(x -> x.config().queues().stream().map(QueueSpec::name).forEach(out::add));
    return out;
  }

  /** A unified diff with three lines of context, {@code a/config vN} against {@code b/new}. */
  static String diff(String before, String after, long fromVersion) {
    List<String> a = before.isEmpty() ? List.of() : before.lines().toList();
    List<String> b = after.lines().toList();
    var patch = DiffUtils.diff(a, b);
    var lines =
        UnifiedDiffUtils.generateUnifiedDiff(
            fromVersion == 0 ? "(none)" : "config v" + fromVersion, "new", a, patch, 3);
    return lines.isEmpty() ? "" : String.join("\n", lines) + "\n";
  }

  private static ConfigView current(Services s) {
    Optional<ConfigVersion> v = s.read(ControlState::config);
    if (v.isPresent()) {
      return view(v.get(), true);
    }
    return s.scheduler()
        .tenancy()
        .map(
            t ->
                new ConfigView(
                    0,
                    STARTUP,
                    t.yaml() == null ? null : Tokens.hash(t.yaml()),
                    null,
                    null,
                    t.yaml()))
        .orElse(new ConfigView(0, NONE, null, null, null, null));
  }

  private static ConfigView view(ConfigVersion v, boolean withText) {
    return new ConfigView(
        v.version(),
        REPLICATED,
        v.sha256(),
        Instant.ofEpochMilli(v.appliedMs()).toString(),
        v.by(),
        withText ? v.yaml() : null);
  }

  private static long version(String text) {
    try {
      long v = Long.parseLong(text.strip());
      if (v >= 1) {
        return v;
      }
    } catch (NumberFormatException e) {
      // below
    }
    throw ApiError.invalid(
        "version",
        "'" + Submissions.clip(text) + "' is not a configuration version",
        "give a version number from `kairos config history` (1 or more)");
  }
}

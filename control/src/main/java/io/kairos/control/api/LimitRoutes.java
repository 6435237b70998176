package io.kairos.control.api;

import io.javalin.config.JavalinConfig;
import io.kairos.control.state.ControlCommand.SetLimits;
import io.kairos.control.state.ControlState;
import io.kairos.control.state.Limits;
import io.kairos.protocol.LimitsUpdate;
import io.kairos.protocol.LimitsView;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@code /api/v1/limits}: read by every user (so each can see what they may submit), changed by
 * admins through the log ({@link SetLimits}), so every replica enforces the same.
 */
final class LimitRoutes {
  private LimitRoutes() {}

  static void register(JavalinConfig config, Services s) {
    config.routes.get(
        "/api/v1/limits",
        ctx -> {
          Api.user(ctx);
          ctx.json(s.read(st -> view(st, s.safeguards())));
        });
    config.routes.put(
        "/api/v1/limits",
        ctx -> {
          Api.admin(ctx);
          LimitsUpdate update = Json.read(ctx.bodyAsBytes(), LimitsUpdate.class);
          if (update == null) {
            throw ApiError.invalid(null, "the body is null", "send a JSON object");
          }
          Limits current = s.read(st -> s.safeguards().limits(st));
          Limits next = apply(update, current, s.safeguards().heapDefaults());
          Services.check(s.commit(new SetLimits(s.clock().millis(), next, false)));
          ctx.json(s.read(st -> view(st, s.safeguards())));
        });
  }

  /** {@code current} changed as {@code update} says; 400 naming the field for a bad value. */
  static Limits apply(LimitsUpdate u, Limits current, Limits defaults) {
    Limits base = Boolean.TRUE.equals(u.reset()) ? defaults : current;
    var perUser = new TreeMap<>(base.perUser());
    if (u.perUser() != null) {
      for (Map.Entry<String, LimitsView.UserLimits> e : u.perUser().entrySet()) {
        if (e.getValue() == null) {
          perUser.remove(e.getKey());
          continue;
        }
        var v = e.getValue();
        try {
          perUser.put(
              e.getKey(), new Limits.UserLimits(v.maxJobs(), v.submitsPerSec(), v.submitBurst()));
        } catch (Limits.InvalidLimitException x) {
          throw invalid("perUser." + e.getKey() + "." + x.field(), x);
        }
      }
    }
    Long ended = u.maxEndedJobs();
    if (ended != null && ended < Limits.MIN_ENDED_JOBS) {
      throw ApiError.invalid(
          "maxEndedJobs",
          "maxEndedJobs must be at least " + Limits.MIN_ENDED_JOBS + ", got " + ended,
          "keep at least "
              + Limits.MIN_ENDED_JOBS
              + " ended jobs, so that a client waiting on its job sees how it ended");
    }
    try {
      return new Limits(
          or(u.maxJobsPerUser(), base.maxJobsPerUser()),
          or(u.maxLiveJobs(), base.maxLiveJobs()),
          or(u.maxEndedJobs(), base.maxEndedJobs()),
          or(u.maxJobBytes(), base.maxJobBytes()),
          u.submitsPerSec() == null ? base.submitsPerSec() : u.submitsPerSec(),
          or(u.submitBurst(), base.submitBurst()),
          perUser);
    } catch (Limits.InvalidLimitException x) {
      throw invalid(x.field(), x);
    }
  }

  private static ApiError invalid(String field, Limits.InvalidLimitException x) {
    return ApiError.invalid(
        field,
        field + " " + x.getMessage().substring(x.field().length() + 1),
        "see `kairos limits show` for the values in force and docs/security.md for what each means");
  }

  private static long or(Long value, long fallback) {
    return value == null ? fallback : value;
  }

  static LimitsView view(ControlState st, Safeguards guards) {
    Limits l = guards.limits(st);
    return new LimitsView(
        l.maxJobsPerUser(),
        l.maxLiveJobs(),
        l.maxEndedJobs(),
        l.maxJobBytes(),
        l.submitsPerSec(),
        l.submitBurst(),
        users(l),
        st.limits().isPresent(),
        st.liveWeight(),
        st.endedWeight(),
        guards.maxHeapBytes(),
        update(guards.heapDefaults()));
  }

  private static Map<String, LimitsView.UserLimits> users(Limits l) {
    var out = new LinkedHashMap<String, LimitsView.UserLimits>();
    l.perUser()
        .forEach(
            (user, u) ->
                out.put(
                    user,
                    new LimitsView.UserLimits(u.maxJobs(), u.submitsPerSec(), u.submitBurst())));
    return out;
  }

  private static LimitsUpdate update(Limits l) {
    return new LimitsUpdate(
        l.maxJobsPerUser(),
        l.maxLiveJobs(),
        l.maxEndedJobs(),
        l.maxJobBytes(),
        l.submitsPerSec(),
        l.submitBurst(),
        users(l),
        null);
  }
}

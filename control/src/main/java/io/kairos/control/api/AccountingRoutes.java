package io.kairos.control.api;

import io.javalin.config.JavalinConfig;
import io.javalin.http.Context;
import io.kairos.control.accounting.AccountingQueries;
import io.kairos.control.accounting.AccountingQueries.GroupBy;
import io.kairos.control.accounting.AccountingQueries.HistoryQuery;
import io.kairos.control.auth.Principal;
import io.kairos.control.state.JobRecord;
import io.kairos.protocol.JobState;
import io.kairos.protocol.JobView;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * {@code GET /api/v1/history} (ended jobs from the accounting store, like sacct) and {@code GET
 * /api/v1/report} (usage per account, user or queue over a period, like sreport). A user who is not
 * an admin reads only their own jobs' records, unless the site's {@code --private-data} widens it
 * ({@link Safeguards#visibility}): the filters narrow what they may see, never widen it.
 */
final class AccountingRoutes {
  static final int DEFAULT_LIMIT = 1_000;
  static final int MAX_LIMIT = 100_000;
  static final Duration DEFAULT_REPORT_PERIOD = Duration.ofDays(1);

  private AccountingRoutes() {}

  static void register(JavalinConfig config, Services s) {
    config.routes.get("/api/v1/history", ctx -> history(ctx, s));
    config.routes.get("/api/v1/report", ctx -> report(ctx, s));
  }

  private static void history(Context ctx, Services s) {
    Principal who = Api.user(ctx);
    long now = s.clock().millis();
    long from = time(ctx, "since", 0, now);
    long to = time(ctx, "until", Long.MAX_VALUE, now);
    var query =
        new HistoryQuery(
            s.safeguards().visibility(who),
            list(ctx, "user"),
            list(ctx, "account"),
            list(ctx, "queue"),
            states(ctx),
            from,
            to,
            JobRoutes.intParam(ctx, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT));
    ctx.json(read(s, q -> q.history(query)));
  }

  private static void report(Context ctx, Services s) {
    Principal who = Api.user(ctx);
    String byText = Optional.ofNullable(ctx.queryParam("by")).orElse("account");
    GroupBy by = GroupBy.parse(byText);
    if (by == null) {
      throw ApiError.invalid(
          "by",
          "'" + Submissions.clip(byText) + "' is not a grouping",
          "use account, user or queue");
    }
    long now = s.clock().millis();
    long to = time(ctx, "until", now, now);
    long from = time(ctx, "since", to - DEFAULT_REPORT_PERIOD.toMillis(), now);
    if (from >= to) {
      throw ApiError.invalid("since", "since must be before until", "give an earlier since");
    }
    ctx.json(read(s, q -> q.report(by, from, to, s.safeguards().visibility(who))));
  }

  /**
   * An ended job the state no longer holds, from the store, as {@code GET /api/v1/jobs/{id}} shows
   * it; empty when the store does not have it either.
   */
  static Optional<JobView> forgottenJob(Services s, long id, Principal who) {
    Optional<JobRecord> stored = read(s, q -> s.accounting().store().job(id));
    return stored.map(
        j -> s.read(st -> Views.job(st, j, s.scheduler(), s.safeguards().mayRead(who, j.request))));
  }

  private interface Read<T> {
    T from(AccountingQueries queries) throws SQLException;
  }

  /** Runs a read after writing the jobs that ended a moment ago; 503 when the store fails. */
  private static <T> T read(Services s, Read<T> read) {
    try {
      s.accounting().writer().flush();
      return read.from(s.accounting().queries());
    } catch (SQLException e) {
      throw ApiError.unavailable(
          "the accounting store cannot be read now ("
              + e.getMessage()
              + "); try again, or ask an admin to check it");
    }
  }

  private static List<String> list(Context ctx, String name) {
    String raw = ctx.queryParam(name);
    if (raw == null || raw.isBlank()) {
      return List.of();
    }
    var out = new ArrayList<String>();
    for (String part : raw.split(",")) {
      if (!part.isBlank()) {
        out.add(part.strip());
      }
    }
    if (out.size() > 1_000) {
      throw ApiError.invalid(name, name + " lists more than 1000 values", "ask for fewer");
    }
    return out;
  }

  private static List<JobState> states(Context ctx) {
    var out = new ArrayList<JobState>();
    for (String part : list(ctx, "state")) {
      JobState st =
          Arrays.stream(JobState.values())
              .filter(v -> v.name().equalsIgnoreCase(part) && v.isFinal())
              .findFirst()
              .orElseThrow(
                  () ->
                      ApiError.invalid(
                          "state",
                          "'" + Submissions.clip(part) + "' is not an ended job's state",
                          "use SUCCEEDED, FAILED or CANCELLED (comma-separated)"));
      out.add(st);
    }
    return out;
  }

  /**
   * A time parameter: an ISO-8601 instant ({@code 2026-12-01T08:00:00Z}), a date (UTC midnight), a
   * duration before now ({@code 90m}, {@code 12h}, {@code 7d}) or {@code now}.
   */
  static long time(Context ctx, String name, long dflt, long nowMs) {
    String raw = ctx.queryParam(name);
    if (raw == null || raw.isBlank()) {
      return dflt;
    }
    String t = raw.strip();
    try {
      if (t.equalsIgnoreCase("now")) {
        return nowMs;
      }
      if (t.matches("\\d{4}-\\d{2}-\\d{2}")) {
        return LocalDate.parse(t).atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli();
      }
      var ago = java.util.regex.Pattern.compile("(\\d{1,9})([smhd])").matcher(t);
      if (ago.matches()) {
        long n = Long.parseLong(ago.group(1));
        long unit =
            switch (ago.group(2).toLowerCase(Locale.ROOT)) {
              case "s" -> 1_000L;
              case "m" -> 60_000L;
              case "h" -> 3_600_000L;
              default -> 86_400_000L;
            };
        return nowMs - n * unit;
      }
      return Instant.parse(t).toEpochMilli();
    } catch (DateTimeParseException | ArithmeticException e) {
      throw ApiError.invalid(
          name,
          "'" + Submissions.clip(t) + "' is not a time",
          "write an ISO-8601 instant (2026-12-01T08:00:00Z), a date (2026-12-01), a duration"
              + " before now (90m, 12h, 7d) or now");
    }
  }
}

package io.kairos.control.accounting;

import com.fasterxml.jackson.core.type.TypeReference;
import io.kairos.protocol.HistoryRecord;
import io.kairos.protocol.JobState;
import io.kairos.protocol.UsageReport;
import java.io.IOException;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the API and the scheduler read from the {@link AccountingStore}: history (sacct), usage
 * reports (sreport) and the attempts fair share charges. Plain SQL that SQLite and PostgreSQL both
 * run (no LEAST/GREATEST: {@code CASE}); every filter is a bound parameter.
 */
public final class AccountingQueries {
  private final AccountingStore store;

  public AccountingQueries(AccountingStore store) {
    this.store = store;
  }

  /**
   * A history query: ended jobs that were pending or running at some time in {@code [fromMs, toMs)}
   * (they ended at or after {@code fromMs}, and were submitted before {@code toMs}).
   *
   * @param users only these users' jobs; empty for all the reader may see
   * @param states only these states; empty for all
   * @param limit at most this many, the most recently ended
   */
  public record HistoryQuery(
      Visibility visibility,
      List<String> users,
      List<String> accounts,
      List<String> queues,
      List<JobState> states,
      long fromMs,
      long toMs,
      int limit) {
    public HistoryQuery {
      users = List.copyOf(users);
      accounts = List.copyOf(accounts);
      queues = List.copyOf(queues);
      states = List.copyOf(states);
    }
  }

  /** What a report's rows are. */
  public enum GroupBy {
    ACCOUNT("j.account"),
    USER("j.user_name"),
    QUEUE("j.queue");

    private final String column;

    GroupBy(String column) {
      this.column = column;
    }

    public String label() {
      return name().toLowerCase(Locale.ROOT);
    }

    /** account, user or queue (any case); null when it is none of them. */
    public static GroupBy parse(String text) {
      for (GroupBy g : values()) {
        if (g.label().equalsIgnoreCase(text.strip())) {
          return g;
        }
      }
      return null;
    }
  }

  /** The ended jobs the query selects, oldest-ended first. */
  public List<HistoryRecord> history(HistoryQuery q) throws SQLException {
    var where = new StringBuilder("j.end_ms >= ? AND j.submit_ms < ? AND ");
    var params = new ArrayList<Object>(List.of(q.fromMs(), q.toMs()));
    where.append(q.visibility().condition());
    params.addAll(q.visibility().params());
    in(where, params, "j.user_name", q.users());
    in(where, params, "j.account", q.accounts());
    in(where, params, "j.queue", q.queues());
    in(where, params, "j.state", q.states().stream().map(JobState::name).toList());
    String sql =
        "SELECT j.job_id, j.name, j.user_name, j.account, j.queue, j.priority_class, j.state,"
            + " j.exit_code, j.message, j.submit_ms, j.start_ms, j.end_ms, j.attempts, j.requeues,"
            + " j.preemptions, j.gpus, j.gpu_model, j.tasks, j.cpus, j.memory_mb,"
            + " j.time_limit_sec, j.nodes, j.gpu_seconds, j.cpu_seconds, j.memory_mb_seconds,"
            + " j.usage_json, j.attempts_json FROM jobs j WHERE "
            + where
            + " ORDER BY j.end_ms DESC, j.job_id DESC LIMIT ?";
    params.add(q.limit());
    var out = new ArrayList<HistoryRecord>();
    synchronized (store) {
      try (PreparedStatement s = store.connection().prepareStatement(sql)) {
        bind(s, params);
        try (ResultSet rs = s.executeQuery()) {
          while (rs.next()) {
            out.add(record(rs));
          }
        }
      }
    }
    Collections.reverse(out);
    return out;
  }

  private static HistoryRecord record(ResultSet rs) throws SQLException {
    int i = 1;
    long id = rs.getLong(i++);
    String name = rs.getString(i++);
    String user = rs.getString(i++);
    String account = rs.getString(i++);
    String queue = rs.getString(i++);
    String priorityClass = rs.getString(i++);
    JobState state = JobState.valueOf(rs.getString(i++));
    int exit = rs.getInt(i++);
    Integer exitCode = rs.wasNull() ? null : exit;
    String message = rs.getString(i++);
    long submitMs = rs.getLong(i++);
    long startMs = rs.getLong(i++);
    boolean started = !rs.wasNull();
    long endMs = rs.getLong(i++);
    int attempts = rs.getInt(i++);
    int requeues = rs.getInt(i++);
    int preemptions = rs.getInt(i++);
    int gpus = rs.getInt(i++);
    String gpuModel = rs.getString(i++);
    int tasks = rs.getInt(i++);
    int cpus = rs.getInt(i++);
    long memoryMb = rs.getLong(i++);
    long timeLimitSec = rs.getLong(i++);
    String nodes = rs.getString(i++);
    double gpuSeconds = rs.getDouble(i++);
    double cpuSeconds = rs.getDouble(i++);
    double memoryMbSeconds = rs.getDouble(i++);
    Map<String, Double> byModel;
    List<AccountedJob.Attempt> attemptRows;
    try {
      byModel = AccountedJob.JSON.readValue(rs.getString(i++), new TypeReference<>() {});
      attemptRows = AccountedJob.JSON.readValue(rs.getString(i), new TypeReference<>() {});
    } catch (IOException e) {
      throw new SQLException("job " + id + "'s usage in the store is unreadable", e);
    }
    var attemptList = new ArrayList<HistoryRecord.JobAttempt>();
    for (AccountedJob.Attempt a : attemptRows) {
      attemptList.add(
          new HistoryRecord.JobAttempt(
              a.attempt(),
              time(a.startMs()),
              time(a.endMs()),
              a.nodes(),
              a.gpus(),
              a.exitCode(),
              a.reason(),
              a.preemptedBy() == 0 ? null : a.preemptedBy()));
    }
    return new HistoryRecord(
        id,
        name,
        user,
        account.isEmpty() ? null : account,
        queue,
        priorityClass.isEmpty() ? null : priorityClass,
        state,
        exitCode,
        message,
        time(submitMs),
        started ? time(startMs) : null,
        time(endMs),
        started ? Math.max(0, endMs - startMs) / 1000 : 0,
        attempts,
        requeues,
        preemptions,
        gpus,
        gpuModel.isEmpty() ? null : gpuModel,
        tasks,
        cpus,
        memoryMb,
        timeLimitSec,
        nodes.isEmpty() ? List.of() : Arrays.asList(nodes.split(",")),
        gpuSeconds,
        new TreeMap<>(byModel),
        cpuSeconds,
        memoryMbSeconds,
        attemptList);
  }

  /**
   * Usage in {@code [fromMs, toMs)} grouped by {@code by}: each attempt counts for the part of it
   * inside the period.
   */
  public UsageReport report(GroupBy by, long fromMs, long toMs, Visibility visibility)
      throws SQLException {
    // The attempt's overlap with the period, in milliseconds.
    String overlap =
        "((CASE WHEN a.end_ms < ? THEN a.end_ms ELSE ? END)"
            + " - (CASE WHEN a.start_ms > ? THEN a.start_ms ELSE ? END))";
    List<Object> overlapParams = List.of(toMs, toMs, fromMs, fromMs);
    String where = " WHERE a.end_ms > ? AND a.start_ms < ? AND " + visibility.condition();
    var whereParams = new ArrayList<Object>(List.of(fromMs, toMs));
    whereParams.addAll(visibility.params());

    var rows = new TreeMap<String, double[]>(); // key -> {jobs, gpuSec, cpuSec, memSec}
    var models = new TreeMap<String, TreeMap<String, Double>>();
    String totals =
        "SELECT "
            + by.column
            + ", COUNT(DISTINCT a.job_id), SUM(a.cpus * "
            + overlap
            + ") / 1000.0, SUM(a.memory_mb * "
            + overlap
            + ") / 1000.0 FROM attempts a JOIN jobs j ON j.job_id = a.job_id"
            + where
            + " GROUP BY "
            + by.column;
    var params = new ArrayList<Object>(overlapParams);
    params.addAll(overlapParams);
    params.addAll(whereParams);
    String perModel =
        "SELECT "
            + by.column
            + ", g.gpu_model, SUM(g.gpus * "
            + overlap
            + ") / 1000.0 FROM attempt_gpus g"
            + " JOIN attempts a ON a.job_id = g.job_id AND a.attempt = g.attempt"
            + " JOIN jobs j ON j.job_id = a.job_id"
            + where
            + " GROUP BY "
            + by.column
            + ", g.gpu_model";
    var modelParams = new ArrayList<Object>(overlapParams);
    modelParams.addAll(whereParams);
    synchronized (store) {
      try (PreparedStatement s = store.connection().prepareStatement(totals)) {
        bind(s, params);
        try (ResultSet rs = s.executeQuery()) {
          while (rs.next()) {
            rows.put(
                rs.getString(1), new double[] {rs.getLong(2), 0, rs.getDouble(3), rs.getDouble(4)});
          }
        }
      }
      try (PreparedStatement s = store.connection().prepareStatement(perModel)) {
        bind(s, modelParams);
        try (ResultSet rs = s.executeQuery()) {
          while (rs.next()) {
            models
                .computeIfAbsent(rs.getString(1), k -> new TreeMap<>())
                .put(rs.getString(2), rs.getDouble(3));
          }
        }
      }
    }
    var out = new ArrayList<UsageReport.UsageRow>();
    double[] sum = new double[4];
    var sumModels = new TreeMap<String, Double>();
    for (var e : rows.entrySet()) {
      var m = models.getOrDefault(e.getKey(), new TreeMap<>());
      double gpu = m.values().stream().mapToDouble(Double::doubleValue).sum();
      double[] v = e.getValue();
      out.add(new UsageReport.UsageRow(e.getKey(), (long) v[0], gpu, m, v[2], v[3]));
      sum[0] += v[0];
      sum[1] += gpu;
      sum[2] += v[2];
      sum[3] += v[3];
      m.forEach((k, x) -> sumModels.merge(k, x, Double::sum));
    }
    out.sort(
        Comparator.comparingDouble(UsageReport.UsageRow::gpuSeconds)
            .reversed()
            .thenComparing(UsageReport.UsageRow::key));
    return new UsageReport(
        by.label(),
        time(fromMs),
        time(toMs),
        out,
        new UsageReport.UsageRow("total", (long) sum[0], sum[1], sumModels, sum[2], sum[3]));
  }

  /**
   * An attempt as fair share charges it.
   *
   * @param gpus the GPUs it held (all models)
   */
  public record Span(
      long jobId,
      int attempt,
      String account,
      long startMs,
      long endMs,
      int gpus,
      int cpus,
      long memoryMb) {}

  /** Every attempt that ended after {@code afterMs}, by end time. */
  public List<Span> attemptsEndedAfter(long afterMs) throws SQLException {
    String sql =
        "SELECT a.job_id, a.attempt, j.account, a.start_ms, a.end_ms, a.cpus, a.memory_mb,"
            + " (SELECT COALESCE(SUM(g.gpus), 0) FROM attempt_gpus g"
            + " WHERE g.job_id = a.job_id AND g.attempt = a.attempt)"
            + " FROM attempts a JOIN jobs j ON j.job_id = a.job_id WHERE a.end_ms > ?"
            + " ORDER BY a.end_ms, a.job_id, a.attempt";
    var out = new ArrayList<Span>();
    synchronized (store) {
      try (PreparedStatement s = store.connection().prepareStatement(sql)) {
        s.setLong(1, afterMs);
        try (ResultSet rs = s.executeQuery()) {
          while (rs.next()) {
            out.add(
                new Span(
                    rs.getLong(1),
                    rs.getInt(2),
                    rs.getString(3),
                    rs.getLong(4),
                    rs.getLong(5),
                    rs.getInt(8),
                    rs.getInt(6),
                    rs.getLong(7)));
          }
        }
      }
    }
    return out;
  }

  /**
   * Ended attempts' use by account in buckets of {@code bucketMs} (by end time): what a new
   * leader's fair share is rebuilt from.
   *
   * @param endMs the bucket's end
   */
  public record Bucket(
      String account, long endMs, double gpuSeconds, double cpuSeconds, double memoryMbSeconds) {}

  /** The use of every attempt that ended after {@code afterMs}, by account and bucket. */
  public List<Bucket> usageBuckets(long afterMs, long bucketMs) throws SQLException {
    String sql =
        "SELECT j.account, a.end_ms / ?,"
            + " SUM(COALESCE(gp.n, 0) * (a.end_ms - a.start_ms)) / 1000.0,"
            + " SUM(a.cpus * (a.end_ms - a.start_ms)) / 1000.0,"
            + " SUM(a.memory_mb * (a.end_ms - a.start_ms)) / 1000.0"
            + " FROM attempts a JOIN jobs j ON j.job_id = a.job_id"
            + " LEFT JOIN (SELECT job_id, attempt, SUM(gpus) AS n FROM attempt_gpus"
            + " GROUP BY job_id, attempt) gp ON gp.job_id = a.job_id AND gp.attempt = a.attempt"
            + " WHERE a.end_ms > ? GROUP BY 1, 2 ORDER BY 2, 1";
    var out = new ArrayList<Bucket>();
    synchronized (store) {
      try (PreparedStatement s = store.connection().prepareStatement(sql)) {
        s.setLong(1, bucketMs);
        s.setLong(2, afterMs);
        try (ResultSet rs = s.executeQuery()) {
          while (rs.next()) {
            out.add(
                new Bucket(
                    rs.getString(1),
                    (rs.getLong(2) + 1) * bucketMs,
                    rs.getDouble(3),
                    rs.getDouble(4),
                    rs.getDouble(5)));
          }
        }
      }
    }
    return out;
  }

  private static void in(
      StringBuilder where, List<Object> params, String column, List<String> values) {
    if (values.isEmpty()) {
      return;
    }
    where
        .append(" AND ")
        .append(column)
        .append(" IN (")
        .append(String.join(",", Collections.nCopies(values.size(), "?")))
        .append(")");
    params.addAll(values);
  }

  private static void bind(PreparedStatement s, List<Object> params) throws SQLException {
    for (int i = 0; i < params.size(); i++) {
      Object p = params.get(i);
      switch (p) {
        case Long l -> s.setLong(i + 1, l);
        case Integer n -> s.setInt(i + 1, n);
        case String t -> s.setString(i + 1, t);
        default -> throw new IllegalArgumentException("parameter " + p);
      }
    }
  }

  static String time(long ms) {
    return Instant.ofEpochMilli(ms).toString();
  }
}

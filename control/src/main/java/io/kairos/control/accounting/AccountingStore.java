package io.kairos.control.accounting;

import com.fasterxml.jackson.core.JsonProcessingException;
import io.kairos.control.state.JobRecord;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import org.flywaydb.core.Flyway;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The accounting store over JDBC: SQLite (a file in the data directory, mode 0600) or PostgreSQL,
 * one schema migrated by Flyway on open ({@code migration/V*.sql} beside this class). Writes are
 * upserts keyed by job id and (job id, attempt), in one transaction per batch: writing a job again
 * changes nothing, so a retry or a new leader that writes what its predecessor wrote neither loses
 * nor duplicates a record.
 *
 * <p>One connection, used by one caller at a time (the methods are synchronized); a PostgreSQL
 * connection that broke is opened again on the next call. Reads are in {@link AccountingQueries}.
 */
public final class AccountingStore implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(AccountingStore.class);
  static final String MIGRATIONS = "classpath:io/kairos/control/accounting/migration";

  private final String jdbcUrl;
  private final Properties login;
  private final boolean embedded;
  private final String where;
  private Connection connection;
  private boolean closed;

  private AccountingStore(String jdbcUrl, Properties login, boolean embedded, String where) {
    this.jdbcUrl = jdbcUrl;
    this.login = login;
    this.embedded = embedded;
    this.where = where;
  }

  /**
   * Opens (creating or migrating) the store the settings name; the embedded one lives in {@code
   * dataDir}.
   *
   * @throws IOException naming the store and what failed
   */
  public static AccountingStore open(AccountingSettings settings, Path dataDir) throws IOException {
    var login = new Properties();
    String url;
    if (settings.isEmbedded()) {
      Path file = dataDir.resolve(AccountingSettings.SQLITE_FILE);
      createPrivate(file);
      url = "jdbc:sqlite:" + file.toAbsolutePath();
    } else {
      url = AccountingSettings.jdbcUrl(settings.postgresUrl().orElseThrow());
      settings.password().ifPresent(p -> login.setProperty("password", p));
    }
    var store = new AccountingStore(url, login, settings.isEmbedded(), settings.describe(dataDir));
    try {
      store.migrate();
      store.connection();
    } catch (SQLException | RuntimeException e) {
      store.close();
      throw new IOException(
          "the accounting store (" + store.where + ") cannot be opened: " + rootMessage(e), e);
    }
    LOG.info("accounting store: {}", store.where);
    return store;
  }

  /** The SQLite file, created empty and private (0600) when it is not there yet. */
  private static void createPrivate(Path file) throws IOException {
    Files.createDirectories(file.toAbsolutePath().getParent());
    if (Files.exists(file)) {
      return;
    }
    try {
      Files.createFile(
          file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    } catch (UnsupportedOperationException e) {
      Files.createFile(file);
    }
  }

  private void migrate() {
    // A PostgreSQL user travels in the URL (?user=NAME), the password in the properties.
    Flyway.configure()
        .dataSource(jdbcUrl, null, login.getProperty("password"))
        .locations(MIGRATIONS)
        .table("accounting_schema_history")
        .load()
        .migrate();
  }

  /** Whether this is the embedded store (each replica keeps its own). */
  public boolean isEmbedded() {
    return embedded;
  }

  /** Where the store is, for logs (no password). */
  public String where() {
    return where;
  }

  synchronized Connection connection() throws SQLException {
    if (closed) {
      throw new SQLException("the accounting store is closed");
    }
    if (connection != null && !connection.isClosed() && (embedded || connection.isValid(2))) {
      return connection;
    }
    if (connection != null) {
      try {
        connection.close();
      } catch (SQLException e) {
        // opening a new one below
      }
    }
    connection = DriverManager.getConnection(jdbcUrl, login);
    if (embedded) {
      try (Statement s = connection.createStatement()) {
        s.execute("PRAGMA journal_mode=WAL");
        s.execute("PRAGMA synchronous=FULL"); // a commit is on disk when it returns
        s.execute("PRAGMA busy_timeout=10000");
      }
    }
    return connection;
  }

  // --- writes ---

  private static final String UPSERT_JOB =
      """
      INSERT INTO jobs (job_id, name, user_name, account, queue, priority_class, state, exit_code,
        message, submit_ms, start_ms, end_ms, attempts, requeues, preemptions, gpus, gpu_model,
        tasks, cpus, memory_mb, time_limit_sec, nodes, gpu_seconds, cpu_seconds,
        memory_mb_seconds, usage_json, attempts_json, record_json)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (job_id) DO UPDATE SET name = excluded.name, user_name = excluded.user_name,
        account = excluded.account, queue = excluded.queue,
        priority_class = excluded.priority_class, state = excluded.state,
        exit_code = excluded.exit_code, message = excluded.message,
        submit_ms = excluded.submit_ms, start_ms = excluded.start_ms, end_ms = excluded.end_ms,
        attempts = excluded.attempts, requeues = excluded.requeues,
        preemptions = excluded.preemptions, gpus = excluded.gpus, gpu_model = excluded.gpu_model,
        tasks = excluded.tasks, cpus = excluded.cpus, memory_mb = excluded.memory_mb,
        time_limit_sec = excluded.time_limit_sec, nodes = excluded.nodes,
        gpu_seconds = excluded.gpu_seconds, cpu_seconds = excluded.cpu_seconds,
        memory_mb_seconds = excluded.memory_mb_seconds, usage_json = excluded.usage_json,
        attempts_json = excluded.attempts_json, record_json = excluded.record_json
      """;

  private static final String UPSERT_ATTEMPT =
      """
      INSERT INTO attempts (job_id, attempt, start_ms, end_ms, nodes, cpus, memory_mb, exit_code,
        reason, preempted_by)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (job_id, attempt) DO UPDATE SET start_ms = excluded.start_ms,
        end_ms = excluded.end_ms, nodes = excluded.nodes, cpus = excluded.cpus,
        memory_mb = excluded.memory_mb, exit_code = excluded.exit_code, reason = excluded.reason,
        preempted_by = excluded.preempted_by
      """;

  private static final String UPSERT_GPUS =
      """
      INSERT INTO attempt_gpus (job_id, attempt, gpu_model, gpus) VALUES (?, ?, ?, ?)
      ON CONFLICT (job_id, attempt, gpu_model) DO UPDATE SET gpus = excluded.gpus
      """;

  /**
   * Writes the jobs (ended, holding no GPUs) in one transaction: when this returns, they are
   * durably in the store. Writing a job again replaces its rows with the same values.
   *
   * @throws SQLException when the store cannot be written (nothing of the batch is then)
   */
  public synchronized void write(List<AccountedJob> jobs) throws SQLException {
    if (jobs.isEmpty()) {
      return;
    }
    Connection c = connection();
    c.setAutoCommit(false);
    try (PreparedStatement job = c.prepareStatement(UPSERT_JOB);
        PreparedStatement attempt = c.prepareStatement(UPSERT_ATTEMPT);
        PreparedStatement gpus = c.prepareStatement(UPSERT_GPUS)) {
      for (AccountedJob a : jobs) {
        bindJob(job, a);
        job.addBatch();
        for (AccountedJob.Attempt t : a.attempts()) {
          long id = a.job().id;
          attempt.setLong(1, id);
          attempt.setInt(2, t.attempt());
          attempt.setLong(3, t.startMs());
          attempt.setLong(4, t.endMs());
          attempt.setString(5, String.join(",", t.nodes()));
          attempt.setInt(6, t.cpus());
          attempt.setLong(7, t.memoryMb());
          setInt(attempt, 8, t.exitCode());
          attempt.setString(9, t.reason());
          attempt.setLong(10, t.preemptedBy());
          attempt.addBatch();
          for (var m : t.gpusByModel().entrySet()) {
            gpus.setLong(1, id);
            gpus.setInt(2, t.attempt());
            gpus.setString(3, m.getKey());
            gpus.setInt(4, m.getValue());
            gpus.addBatch();
          }
        }
      }
      job.executeBatch();
      attempt.executeBatch();
      gpus.executeBatch();
      c.commit();
    } catch (SQLException | RuntimeException e) {
      try {
        c.rollback();
      } catch (SQLException rollback) {
        e.addSuppressed(rollback);
      }
      throw e;
    } finally {
      try {
        c.setAutoCommit(true);
      } catch (SQLException e) {
        LOG.debug("could not reset autocommit on the accounting store: {}", e.toString());
      }
    }
  }

  private static void bindJob(PreparedStatement s, AccountedJob a) throws SQLException {
    JobRecord j = a.job();
    var r = j.request;
    int i = 1;
    s.setLong(i++, j.id);
    s.setString(i++, r.name());
    s.setString(i++, r.user());
    s.setString(i++, r.account());
    s.setString(i++, r.queue());
    s.setString(i++, r.priorityClass());
    s.setString(i++, j.state.name());
    setInt(s, i++, j.exitCode);
    s.setString(i++, j.message);
    s.setLong(i++, j.submitMs);
    if (j.attempt > 0) {
      s.setLong(i++, j.startMs);
    } else {
      s.setNull(i++, Types.BIGINT);
    }
    s.setLong(i++, j.endMs);
    s.setInt(i++, j.attempt);
    s.setInt(i++, j.requeues);
    s.setInt(i++, a.preemptions());
    s.setInt(i++, r.gpus());
    s.setString(i++, r.gpuModel());
    s.setInt(i++, r.tasks());
    s.setInt(i++, r.cpus());
    s.setLong(i++, r.memoryMb());
    s.setLong(i++, r.timeLimitSec());
    s.setString(i++, String.join(",", j.placement.stream().map(t -> t.node()).toList()));
    s.setDouble(i++, a.gpuSeconds());
    s.setDouble(i++, a.cpuSeconds());
    s.setDouble(i++, a.memoryMbSeconds());
    try {
      s.setString(i++, AccountedJob.JSON.writeValueAsString(a.gpuSecondsByModel()));
      s.setString(i++, AccountedJob.JSON.writeValueAsString(a.attempts()));
    } catch (JsonProcessingException e) {
      throw new SQLException("cannot encode job " + j.id + "'s usage", e);
    }
    s.setString(i, a.recordJson());
  }

  static void setInt(PreparedStatement s, int index, Integer value) throws SQLException {
    if (value == null) {
      s.setNull(index, Types.INTEGER);
    } else {
      s.setInt(index, value);
    }
  }

  // --- one job ---

  /**
   * One utilization sample of the dashboard's history.
   *
   * @param atMs when it was taken (epoch milliseconds)
   * @param gpusTotal GPUs in service (nodes not DOWN)
   * @param gpusBusy GPUs held by running jobs
   * @param pending pending jobs
   * @param running running jobs
   * @param started jobs started since the previous sample
   * @param finished jobs ended since the previous sample
   */
  public record Utilization(
      long atMs,
      long gpusTotal,
      long gpusBusy,
      long pending,
      long running,
      long started,
      long finished) {}

  /** Writes a sample; a sample at the same millisecond is already there and stays as it is. */
  public synchronized void writeUtilization(Utilization u) throws SQLException {
    try (PreparedStatement s =
        connection()
            .prepareStatement(
                "INSERT INTO utilization (at_ms, gpus_total, gpus_busy, pending, running,"
                    + " started, finished) VALUES (?, ?, ?, ?, ?, ?, ?)"
                    + " ON CONFLICT (at_ms) DO NOTHING")) {
      s.setLong(1, u.atMs());
      s.setLong(2, u.gpusTotal());
      s.setLong(3, u.gpusBusy());
      s.setLong(4, u.pending());
      s.setLong(5, u.running());
      s.setLong(6, u.started());
      s.setLong(7, u.finished());
      s.executeUpdate();
    }
  }

  /** The samples taken at or after {@code fromMs}, oldest first. */
  public synchronized List<Utilization> utilizationSince(long fromMs) throws SQLException {
    List<Utilization> out = new ArrayList<>();
    try (PreparedStatement s =
        connection()
            .prepareStatement(
                "SELECT at_ms, gpus_total, gpus_busy, pending, running, started, finished"
                    + " FROM utilization WHERE at_ms >= ? ORDER BY at_ms")) {
      s.setLong(1, fromMs);
      try (ResultSet r = s.executeQuery()) {
        while (r.next()) {
          out.add(
              new Utilization(
                  r.getLong(1),
                  r.getLong(2),
                  r.getLong(3),
                  r.getLong(4),
                  r.getLong(5),
                  r.getLong(6),
                  r.getLong(7)));
        }
      }
    }
    return out;
  }

  /** Deletes the samples taken before {@code beforeMs}; returns how many. */
  public synchronized int pruneUtilization(long beforeMs) throws SQLException {
    try (PreparedStatement s =
        connection().prepareStatement("DELETE FROM utilization WHERE at_ms < ?")) {
      s.setLong(1, beforeMs);
      return s.executeUpdate();
    }
  }

  /** The job's record as it was when it was written, if the store has it. */
  public synchronized Optional<JobRecord> job(long id) throws SQLException {
    try (PreparedStatement s =
        connection().prepareStatement("SELECT record_json FROM jobs WHERE job_id = ?")) {
      s.setLong(1, id);
      try (var rs = s.executeQuery()) {
        return rs.next() ? Optional.of(AccountedJob.readRecord(rs.getString(1))) : Optional.empty();
      }
    }
  }

  /** How many jobs the store holds. */
  public synchronized long jobCount() throws SQLException {
    try (Statement s = connection().createStatement();
        var rs = s.executeQuery("SELECT COUNT(*) FROM jobs")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** Which of {@code ids} the store holds. */
  public synchronized List<Long> present(List<Long> ids) throws SQLException {
    var out = new ArrayList<Long>();
    for (int from = 0; from < ids.size(); from += 500) {
      var part = ids.subList(from, Math.min(ids.size(), from + 500));
      String marks = String.join(",", java.util.Collections.nCopies(part.size(), "?"));
      try (PreparedStatement s =
          connection()
              .prepareStatement("SELECT job_id FROM jobs WHERE job_id IN (" + marks + ")")) {
        for (int i = 0; i < part.size(); i++) {
          s.setLong(i + 1, part.get(i));
        }
        try (var rs = s.executeQuery()) {
          while (rs.next()) {
            out.add(rs.getLong(1));
          }
        }
      }
    }
    return out;
  }

  @Override
  public synchronized void close() {
    closed = true;
    if (connection != null) {
      try {
        connection.close();
      } catch (SQLException e) {
        LOG.debug("closing the accounting store: {}", e.toString());
      }
      connection = null;
    }
  }

  static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t.getMessage() == null ? t.toString() : t.getMessage();
  }
}

package io.kairos.control.accounting;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.control.accounting.AccountingQueries.GroupBy;
import io.kairos.control.accounting.AccountingQueries.HistoryQuery;
import io.kairos.control.accounting.TestStores.Kind;
import io.kairos.control.state.AttemptRecord;
import io.kairos.control.state.JobRecord;
import io.kairos.control.state.JobRequest;
import io.kairos.protocol.GpuDevice;
import io.kairos.protocol.HistoryRecord;
import io.kairos.protocol.JobState;
import io.kairos.protocol.TaskPlacement;
import io.kairos.protocol.UsageReport;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The store on SQLite and on PostgreSQL: the same writes give the same reads. */
class AccountingStoreTest {
  static final long T0 = 1_700_000_000_000L;
  static final long MIN = 60_000;

  @TempDir Path dir;
  AccountingStore store;

  @AfterEach
  void close() {
    if (store != null) {
      store.close();
    }
  }

  static final Map<String, List<GpuDevice>> NODES =
      Map.of(
          "h1", gpus("H100", 8),
          "a1", gpus("A100", 8));

  static List<GpuDevice> gpus(String model, int n) {
    var out = new ArrayList<GpuDevice>();
    for (int i = 0; i < n; i++) {
      out.add(new GpuDevice(i, "GPU-" + model + i, model, 80L << 30));
    }
    return out;
  }

  static JobRequest request(String user, String account, String queue, int gpus) {
    return new JobRequest(
            "train",
            List.of("python", "train.py"),
            Map.of("WANDB_API_KEY", "secret-key"),
            "",
            gpus,
            0,
            2,
            1024,
            3600,
            queue,
            0,
            "",
            user)
        .withTenancy(account, "", 0);
  }

  /** An ended job that ran once, from {@code startMs} to {@code endMs}, on {@code node}. */
  static JobRecord ended(
      long id,
      String user,
      String account,
      String queue,
      JobState state,
      long startMs,
      long endMs,
      String node,
      int gpus) {
    var j = new JobRecord();
    j.id = id;
    j.request = request(user, account, queue, gpus);
    j.state = state;
    j.submitMs = startMs - MIN;
    j.startMs = startMs;
    j.endMs = endMs;
    j.attempt = 1;
    j.exitCode =
        state == JobState.SUCCEEDED
            ? Integer.valueOf(0)
            : state == JobState.FAILED ? Integer.valueOf(3) : null;
    j.message = "ended " + state;
    var idx = new ArrayList<Integer>();
    for (int i = 0; i < gpus; i++) {
      idx.add(i);
    }
    j.placement = List.of(new TaskPlacement(0, node, idx));
    return j;
  }

  void write(JobRecord... jobs) throws SQLException {
    var rows = new ArrayList<AccountedJob>();
    for (JobRecord j : jobs) {
      rows.add(AccountedJob.of(j, NODES::get));
    }
    store.write(rows);
  }

  List<HistoryRecord> history(Visibility v) throws SQLException {
    return new AccountingQueries(store)
        .history(
            new HistoryQuery(
                v, List.of(), List.of(), List.of(), List.of(), 0, Long.MAX_VALUE, 1000));
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void aJobWrittenTwiceIsOneRowWithEachAttemptOnce(Kind kind) throws Exception {
    store = TestStores.open(kind, dir);
    var j =
        ended(1, "alice", "ml", "gpu", JobState.SUCCEEDED, T0 + 10 * MIN, T0 + 20 * MIN, "h1", 4);
    // It was preempted once before, on the A100 node, for 5 minutes.
    j.attempt = 2;
    j.requeues = 1;
    j.pastAttempts =
        List.of(
            new AttemptRecord(
                1,
                T0,
                T0 + 5 * MIN,
                List.of(new TaskPlacement(0, "a1", List.of(0, 1, 2, 3))),
                143,
                "requeued: preempted",
                7));
    write(j);
    write(j); // the new leader writes it again
    store.write(List.of(AccountedJob.of(j, NODES::get)));

    assertThat(store.jobCount()).isEqualTo(1);
    var h = history(Visibility.everyone());
    assertThat(h).hasSize(1);
    HistoryRecord r = h.getFirst();
    assertThat(r.attempts()).isEqualTo(2);
    assertThat(r.attemptList()).extracting(HistoryRecord.JobAttempt::attempt).containsExactly(1, 2);
    assertThat(r.attemptList().getFirst().preemptedBy()).isEqualTo(7L);
    assertThat(r.preemptions()).isEqualTo(1);
    assertThat(r.gpuSecondsByModel())
        .containsEntry("A100", 4 * 300.0)
        .containsEntry("H100", 4 * 600.0);
    assertThat(r.gpuSeconds()).isEqualTo(4 * 900.0);
    assertThat(r.cpuSeconds()).isEqualTo(2 * 900.0);
    assertThat(r.memoryMbSeconds()).isEqualTo(1024 * 900.0);
    assertThat(r.nodes()).containsExactly("h1");
    assertThat(r.elapsedSec()).isEqualTo(600);
    try (var c = store.connection().createStatement();
        var rs = c.executeQuery("SELECT COUNT(*) FROM attempts WHERE job_id = 1")) {
      rs.next();
      assertThat(rs.getInt(1)).isEqualTo(2);
    }
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void theStoredRecordShowsTheJobButNotItsEnvValues(Kind kind) throws Exception {
    store = TestStores.open(kind, dir);
    write(ended(5, "alice", "", "gpu", JobState.FAILED, T0, T0 + MIN, "h1", 1));
    JobRecord back = store.job(5).orElseThrow();
    assertThat(back.state).isEqualTo(JobState.FAILED);
    assertThat(back.exitCode).isEqualTo(3);
    assertThat(back.request.command()).containsExactly("python", "train.py");
    assertThat(back.request.env()).containsEntry("WANDB_API_KEY", "");
    assertThat(store.job(6)).isEmpty();
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void historyFiltersByUserAccountQueueStateAndTime(Kind kind) throws Exception {
    store = TestStores.open(kind, dir);
    write(
        ended(1, "alice", "ml", "gpu", JobState.SUCCEEDED, T0, T0 + MIN, "h1", 1),
        ended(2, "bob", "ml", "gpu", JobState.FAILED, T0, T0 + 2 * MIN, "h1", 1),
        ended(3, "alice", "vision", "cpu", JobState.CANCELLED, T0, T0 + 3 * MIN, "h1", 1),
        ended(4, "carol", "vision", "gpu", JobState.SUCCEEDED, T0, T0 + 60 * MIN, "h1", 1));
    var q = new AccountingQueries(store);
    var all = Visibility.everyone();
    assertThat(ids(q.history(query(all, List.of("alice"), List.of(), List.of(), List.of()))))
        .containsExactly(1L, 3L);
    assertThat(ids(q.history(query(all, List.of(), List.of("vision"), List.of(), List.of()))))
        .containsExactly(3L, 4L);
    assertThat(ids(q.history(query(all, List.of(), List.of(), List.of("gpu"), List.of()))))
        .containsExactly(1L, 2L, 4L);
    assertThat(
            ids(q.history(query(all, List.of(), List.of(), List.of(), List.of(JobState.FAILED)))))
        .containsExactly(2L);
    // Ended at or after T0 + 2m, submitted before T0 + 10m.
    assertThat(
            ids(
                q.history(
                    new HistoryQuery(
                        all,
                        List.of(),
                        List.of(),
                        List.of(),
                        List.of(),
                        T0 + 2 * MIN,
                        T0 + 10 * MIN,
                        100))))
        .containsExactly(2L, 3L, 4L);
    // The limit keeps the most recently ended, oldest first.
    assertThat(
            ids(
                q.history(
                    new HistoryQuery(
                        all, List.of(), List.of(), List.of(), List.of(), 0, Long.MAX_VALUE, 2))))
        .containsExactly(3L, 4L);
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void aPlainUserSeesOnlyTheirOwnRecordsWhateverTheyAskFor(Kind kind) throws Exception {
    store = TestStores.open(kind, dir);
    write(
        ended(1, "alice", "ml", "gpu", JobState.SUCCEEDED, T0, T0 + MIN, "h1", 8),
        ended(2, "bob", "ml", "gpu", JobState.SUCCEEDED, T0, T0 + MIN, "h1", 1));
    var q = new AccountingQueries(store);
    var bob = Visibility.own("bob", List.of());
    assertThat(ids(q.history(query(bob, List.of("alice"), List.of(), List.of(), List.of()))))
        .isEmpty();
    assertThat(ids(history(bob))).containsExactly(2L);
    UsageReport byUser = q.report(GroupBy.USER, T0, T0 + MIN, bob);
    assertThat(byUser.rows()).extracting(UsageReport.UsageRow::key).containsExactly("bob");
    assertThat(byUser.total().gpuSeconds()).isEqualTo(60.0);
    // A member of account ml (--private-data account) sees the jobs charged to ml.
    var member = Visibility.own("dave", List.of("dave", "ml", "root"));
    assertThat(ids(history(member))).containsExactly(1L, 2L);
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void aReportCountsTheUseInsideThePeriodByAccountUserAndQueue(Kind kind) throws Exception {
    store = TestStores.open(kind, dir);
    write(
        // 8 H100 for 20 minutes, half of it inside [T0 + 10m, T0 + 30m)
        ended(1, "alice", "ml", "gpu", JobState.SUCCEEDED, T0, T0 + 20 * MIN, "h1", 8),
        // 2 A100 for 10 minutes, all inside
        ended(2, "bob", "vision", "gpu", JobState.SUCCEEDED, T0 + 15 * MIN, T0 + 25 * MIN, "a1", 2),
        // outside the period
        ended(
            3, "bob", "vision", "cpu", JobState.SUCCEEDED, T0 + 40 * MIN, T0 + 50 * MIN, "h1", 4));
    var q = new AccountingQueries(store);
    var all = Visibility.everyone();
    UsageReport byAccount = q.report(GroupBy.ACCOUNT, T0 + 10 * MIN, T0 + 30 * MIN, all);
    assertThat(byAccount.rows())
        .extracting(UsageReport.UsageRow::key)
        .containsExactly("ml", "vision");
    assertThat(byAccount.rows().get(0).gpuSeconds()).isEqualTo(8 * 600.0);
    assertThat(byAccount.rows().get(0).gpuSecondsByModel()).containsEntry("H100", 8 * 600.0);
    assertThat(byAccount.rows().get(0).cpuSeconds()).isEqualTo(2 * 600.0);
    assertThat(byAccount.rows().get(1).gpuSeconds()).isEqualTo(2 * 600.0);
    assertThat(byAccount.rows().get(1).gpuSecondsByModel()).containsEntry("A100", 2 * 600.0);
    assertThat(byAccount.total().jobs()).isEqualTo(2);
    assertThat(byAccount.total().gpuSeconds()).isEqualTo(10 * 600.0);

    UsageReport byQueue = q.report(GroupBy.QUEUE, T0, T0 + 60 * MIN, all);
    assertThat(byQueue.rows()).extracting(UsageReport.UsageRow::key).containsExactly("gpu", "cpu");
    assertThat(byQueue.rows().get(0).jobs()).isEqualTo(2);

    UsageReport byUser = q.report(GroupBy.USER, T0, T0 + 60 * MIN, all);
    assertThat(byUser.rows()).extracting(UsageReport.UsageRow::key).containsExactly("alice", "bob");
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void reopeningMigratesNothingAndKeepsTheRecords(Kind kind) throws Exception {
    var settings = TestStores.settings(kind);
    store = AccountingStore.open(settings, dir);
    write(ended(1, "alice", "", "gpu", JobState.SUCCEEDED, T0, T0 + MIN, "h1", 1));
    store.close();
    store = AccountingStore.open(settings, dir);
    assertThat(store.jobCount()).isEqualTo(1);
    assertThat(store.present(List.of(1L, 2L))).containsExactly(1L);
    var spans = new AccountingQueries(store).attemptsEndedAfter(0);
    assertThat(spans).hasSize(1);
    assertThat(spans.getFirst().gpus()).isEqualTo(1);
    if (kind == Kind.SQLITE) {
      var file = dir.resolve(AccountingSettings.SQLITE_FILE);
      assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
          .isEqualTo("rw-------");
    }
  }

  static HistoryQuery query(
      Visibility v,
      List<String> users,
      List<String> accounts,
      List<String> queues,
      List<JobState> states) {
    return new HistoryQuery(v, users, accounts, queues, states, 0, Long.MAX_VALUE, 1000);
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void utilizationSamplesAreKeptOncePerInstantReadInOrderAndPruned(Kind kind) throws Exception {
    store = TestStores.open(kind, dir);
    var later = new AccountingStore.Utilization(T0 + 20_000, 16, 12, 4, 3, 1, 2);
    var first = new AccountingStore.Utilization(T0 + 10_000, 16, 8, 5, 2, 2, 0);
    store.writeUtilization(later);
    store.writeUtilization(first);
    // A second leader writing the same instant (or a retry) changes nothing.
    store.writeUtilization(new AccountingStore.Utilization(T0 + 10_000, 99, 99, 99, 99, 9, 9));
    assertThat(store.utilizationSince(T0)).containsExactly(first, later);
    assertThat(store.utilizationSince(T0 + 15_000)).containsExactly(later);
    assertThat(store.pruneUtilization(T0 + 15_000)).isEqualTo(1);
    assertThat(store.utilizationSince(0)).containsExactly(later);
  }

  static List<Long> ids(List<HistoryRecord> records) {
    return records.stream().map(HistoryRecord::id).toList();
  }
}

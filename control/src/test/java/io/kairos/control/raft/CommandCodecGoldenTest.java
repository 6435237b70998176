package io.kairos.control.raft;

import static io.kairos.control.raft.GoldenLogs.json;
import static io.kairos.control.raft.GoldenLogs.lines;
import static io.kairos.control.raft.GoldenLogs.snapshotJson;
import static io.kairos.control.raft.GoldenLogs.text;
import static io.kairos.control.raft.GoldenLogs.withFormat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kairos.control.api.ApiError;
import io.kairos.control.api.Json;
import io.kairos.control.state.ControlCommand;
import io.kairos.control.state.ControlCommand.SubmitJobs;
import io.kairos.control.state.ControlCommand.TaskEnded;
import io.kairos.control.state.ControlState;
import io.kairos.control.state.UserRecord;
import io.kairos.protocol.agent.ExitReason;
import io.kairos.protocol.agent.Heartbeat;
import io.kairos.protocol.agent.TaskReport;
import io.kairos.protocol.agent.TaskStatus;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import org.junit.jupiter.api.Test;

/**
 * Old encodings still decode, to the byte: golden files in {@code src/test/resources/codec/},
 * written by the controller before exit reasons became {@link ExitReason} (they were strings).
 *
 * <p>{@code exit-reasons.log}: one log entry per line (its JSON, without the format byte): two
 * nodes, twelve jobs, and a task end with every exit reason and with none. {@code
 * exit-reasons.results}: what applying each entry answered. {@code exit-reasons.snapshot.json}: the
 * snapshot of the state after the whole log, as that controller wrote it (it must load and write
 * the same bytes). {@code exit-reasons.replayed.snapshot.json}: the snapshot a replay of the log
 * writes now: the same, plus each requeued job's ended attempt ({@code pastAttempts}), which the
 * state records since the accounting store (a deliberate change: older code did not keep them). The
 * log and the snapshot must decode forever; if a command is deliberately made to do something else,
 * the results and the snapshot are rewritten from a replay, and the log stays as it is.
 *
 * <p>{@code run-as.*}: the same for the user table and the Unix account a job runs as: a root agent
 * and one that runs only alice's jobs, admins mapping bob (twice) and carol, three jobs (alice's
 * and bob's recording their accounts, carol's written as before the table, without one), a start of
 * bob's job on alice's node (refused), starts on the right nodes, and an end.
 */
class CommandCodecGoldenTest {
  private static final String LOG = "/codec/exit-reasons.log";
  private static final String RESULTS = "/codec/exit-reasons.results";
  private static final String SNAPSHOT = "/codec/exit-reasons.snapshot.json";
  private static final String REPLAYED_SNAPSHOT = "/codec/exit-reasons.replayed.snapshot.json";
  private static final String RUN_AS_LOG = "/codec/run-as.log";
  private static final String RUN_AS_RESULTS = "/codec/run-as.results";
  private static final String RUN_AS_SNAPSHOT = "/codec/run-as.snapshot.json";

  @Test
  void everyLogEntryDecodesAndEncodesToTheSameBytes() {
    for (String line : lines(LOG)) {
      ControlCommand command = CommandCodec.decode(withFormat(line));
      assertThat(json(CommandCodec.encode(command))).as("re-encoded").isEqualTo(line);
    }
  }

  @Test
  void theReasonsOfTodaysLogDecodeAsExitReasons() {
    var reasons = new ArrayList<ExitReason>();
    for (String line : lines(LOG)) {
      if (CommandCodec.decode(withFormat(line)) instanceof TaskEnded t) {
        reasons.add(t.reason());
      }
    }
    var expected = new ArrayList<ExitReason>();
    for (ExitReason r : ExitReason.values()) {
      expected.add(r);
      expected.add(r);
    }
    expected.add(null);
    expected.add(null);
    assertThat(reasons).containsExactlyInAnyOrderElementsOf(expected);
  }

  @Test
  void theLogReplaysToTheSameResultsAndSnapshot() {
    var state = new ControlState();
    var results = new ArrayList<String>();
    for (String line : lines(LOG)) {
      results.add(
          json(CommandCodec.encodeResult(state.apply(CommandCodec.decode(withFormat(line))))));
    }
    assertThat(results).containsExactlyElementsOf(lines(RESULTS));
    assertThat(snapshotJson(state)).isEqualTo(text(REPLAYED_SNAPSHOT).strip());
  }

  @Test
  void theSnapshotLoadsAndWritesTheSameBytes() throws IOException {
    byte[] bytes = withFormat(goldenSnapshot());
    ControlState loaded = ControlState.of(CommandCodec.readImage(new ByteArrayInputStream(bytes)));
    assertThat(snapshotJson(loaded)).isEqualTo(goldenSnapshot());
    assertThat(loaded.jobs()).hasSize(12);
  }

  @Test
  void everyRunAsEntryDecodesAndEncodesToTheSameBytes() {
    for (String line : lines(RUN_AS_LOG)) {
      ControlCommand command = CommandCodec.decode(withFormat(line));
      assertThat(json(CommandCodec.encode(command))).as("re-encoded").isEqualTo(line);
    }
  }

  @Test
  void theRunAsLogReplaysToTheSameResultsAndSnapshot() {
    var state = new ControlState();
    var results = new ArrayList<String>();
    for (String line : lines(RUN_AS_LOG)) {
      results.add(
          json(CommandCodec.encodeResult(state.apply(CommandCodec.decode(withFormat(line))))));
    }
    assertThat(results).containsExactlyElementsOf(lines(RUN_AS_RESULTS));
    assertThat(snapshotJson(state)).isEqualTo(text(RUN_AS_SNAPSHOT).strip());
    // The table holds the last row set per user; each job runs as what its entry recorded.
    assertThat(state.users())
        .containsExactly(new UserRecord("bob", "bob.smith"), new UserRecord("carol", "cjones"));
    assertThat(state.jobs())
        .extracting(j -> j.request.unixAccount())
        .containsExactly("alice", "bob.smith", "carol");
    // Bob's job was refused on alice's node, and started on the root one.
    assertThat(state.job(2).orElseThrow().placement)
        .extracting(t -> t.node())
        .containsExactly("n1");
  }

  @Test
  void theRunAsSnapshotLoadsAndWritesTheSameBytes() throws IOException {
    byte[] bytes = withFormat(text(RUN_AS_SNAPSHOT).strip());
    ControlState loaded = ControlState.of(CommandCodec.readImage(new ByteArrayInputStream(bytes)));
    assertThat(snapshotJson(loaded)).isEqualTo(text(RUN_AS_SNAPSHOT).strip());
    assertThat(loaded.user("bob")).hasValue(new UserRecord("bob", "bob.smith"));
    assertThat(loaded.node("n2").orElseThrow().registration.runsOnlyAs()).isEqualTo("alice");
  }

  /** Entries written before {@code runAs} decode without one: their jobs run as their user. */
  @Test
  void aSubmissionWithoutRunAsRunsAsItsUser() {
    int submits = 0;
    for (String line : lines(LOG)) {
      if (CommandCodec.decode(withFormat(line)) instanceof SubmitJobs s) {
        for (var r : s.jobs()) {
          assertThat(line).doesNotContain("runAs");
          assertThat(r.runAs()).isNull();
          assertThat(r.unixAccount()).isEqualTo(r.user());
          submits++;
        }
      }
    }
    assertThat(submits).isPositive();
  }

  /** The agent protocol: a task report as agents send it, with and without a reason. */
  @Test
  void aTaskReportKeepsItsWireForm() {
    String killed =
        "{\"jobId\":7,\"attempt\":2,\"task\":1,\"status\":\"EXITED\",\"exitCode\":143,"
            + "\"reason\":\"KILLED\",\"message\":\"killed by the controller\","
            + "\"startedAtMs\":1700000000000,\"endedAtMs\":1700000005000}";
    String exited =
        "{\"jobId\":7,\"attempt\":2,\"task\":1,\"status\":\"EXITED\",\"exitCode\":0,"
            + "\"startedAtMs\":1700000000000,\"endedAtMs\":1700000005000}";
    for (ExitReason r : ExitReason.values()) {
      String body = killed.replace("KILLED", r.name());
      TaskReport report = Json.read(body.getBytes(StandardCharsets.UTF_8), TaskReport.class);
      assertThat(report.reason()).isEqualTo(r);
      assertThat(report.status()).isEqualTo(TaskStatus.EXITED);
      assertThat(Json.write(report)).isEqualTo(body);
    }
    TaskReport report = Json.read(exited.getBytes(StandardCharsets.UTF_8), TaskReport.class);
    assertThat(report.reason()).isNull();
    assertThat(Json.write(report)).isEqualTo(exited);
  }

  /** A reason no agent sends is bad input (400, naming the field), not a string passed along. */
  @Test
  void anUnknownReasonIsRefusedNamingTheField() {
    String body =
        "{\"node\":\"n1\",\"epoch\":1,\"waitMs\":0,\"tasks\":[{\"jobId\":7,\"attempt\":2,"
            + "\"task\":1,\"status\":\"EXITED\",\"exitCode\":1,\"reason\":\"EXPLODED\"}]}";
    assertThatThrownBy(() -> Json.read(body.getBytes(StandardCharsets.UTF_8), Heartbeat.class))
        .isInstanceOfSatisfying(
            ApiError.class,
            e -> {
              assertThat(e.status()).isEqualTo(400);
              assertThat(e.field()).isEqualTo("tasks[0].reason");
            });
  }

  // --- helpers ---

  /** The golden snapshot's JSON (a trailing newline an editor may add is not part of it). */
  private static String goldenSnapshot() {
    return text(SNAPSHOT).strip();
  }
}

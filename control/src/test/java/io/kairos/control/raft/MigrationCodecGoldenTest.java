package io.kairos.control.raft;

import static io.kairos.control.raft.GoldenLogs.json;
import static io.kairos.control.raft.GoldenLogs.lines;
import static io.kairos.control.raft.GoldenLogs.snapshotJson;
import static io.kairos.control.raft.GoldenLogs.text;
import static io.kairos.control.raft.GoldenLogs.withFormat;
import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.control.state.CheckpointEntry;
import io.kairos.control.state.CheckpointPolicy;
import io.kairos.control.state.ControlCommand;
import io.kairos.control.state.ControlCommand.MigrateJob;
import io.kairos.control.state.ControlCommand.RecordCheckpoint;
import io.kairos.control.state.ControlCommand.StartJobs;
import io.kairos.control.state.ControlCommand.SubmitJobs;
import io.kairos.control.state.ControlCommand.TaskEnded;
import io.kairos.control.state.ControlState;
import io.kairos.control.state.JobRequest;
import io.kairos.protocol.TaskPlacement;
import io.kairos.protocol.agent.ExitReason;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The encoding of a move ({@link MigrateJob}) stays readable, to the byte, as {@link
 * ElasticCodecGoldenTest} keeps the elastic ones: {@code migration.log} is a controller's log of
 * three 2-GPU nodes, a checkpointable 2-GPU job started on n1, moved to n2 (it records a
 * checkpoint, its task ends, it is queued again pinned to n2), restarted on n2, and a second move
 * inside the protection window (refused); {@code migration.results} what applying each answered;
 * {@code migration.snapshot.json} the state after the log. Rewrite as for the elastic files ({@code
 * -Dkairos.codec.rewrite=true}); the log stays as it is.
 */
public class MigrationCodecGoldenTest {
  private static final String LOG = "/codec/migration.log";
  private static final String RESULTS = "/codec/migration.results";
  private static final String SNAPSHOT = "/codec/migration.snapshot.json";
  private static final long T0 = 1_700_000_000_000L;

  public static List<ControlCommand> commands() {
    var out = new ArrayList<ControlCommand>();
    for (String n : List.of("n1", "n2", "n3")) {
      out.add(new ControlCommand.RegisterNode(T0, registration(n)));
    }
    out.add(new SubmitJobs(T0 + 1, List.of(checkpointable())));
    out.add(new StartJobs(T0 + 2, List.of(new ControlCommand.Start(1, List.of(task(0, "n1"))))));
    out.add(new MigrateJob(T0 + 3, 1, 1, List.of("n2"), 7, 3600, "gain 9 GPU-s > cost 4 GPU-s"));
    out.add(
        new RecordCheckpoint(
            T0 + 4, 1, new CheckpointEntry(5, 1, T0 + 4, 1024, "step-5/manifest.json", 2)));
    out.add(new TaskEnded(T0 + 5, "n1", 1, 1, 1, 0, 143, ExitReason.KILLED, "migrating"));
    out.add(
        new StartJobs(T0 + 2_000, List.of(new ControlCommand.Start(1, List.of(task(0, "n2"))))));
    out.add(
        new MigrateJob(T0 + 3_000, 1, 2, List.of("n3"), 1, 3600, "gain 9 GPU-s > cost 4 GPU-s"));
    return out;
  }

  @Test
  void everyLogEntryDecodesAndEncodesToTheSameBytes() {
    GoldenLogs.rewriteIfAsked("migration", commands());
    for (String line : lines(LOG)) {
      ControlCommand command = CommandCodec.decode(withFormat(line));
      assertThat(json(CommandCodec.encode(command))).as("re-encoded").isEqualTo(line);
    }
    assertThat(lines(LOG)).hasSize(commands().size());
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
    assertThat(snapshotJson(state)).isEqualTo(text(SNAPSHOT).strip());
    var job = state.job(1).orElseThrow();
    assertThat(job.attempt).isEqualTo(2);
    assertThat(job.placement).singleElement().satisfies(t -> assertThat(t.node()).isEqualTo("n2"));
    assertThat(job.migrations).isEqualTo(1);
    assertThat(job.migrationTarget).isEmpty();
    assertThat(job.pastAttempts.getLast().reason())
        .startsWith("migrated to n2 for job 7")
        .endsWith("after checkpoint at step 5");
    // The last entry moves it again inside its protection window: refused.
    assertThat(results.getLast()).contains("409");
  }

  @Test
  void theSnapshotLoadsAndWritesTheSameBytes() throws IOException {
    byte[] bytes = withFormat(text(SNAPSHOT).strip());
    ControlState loaded = ControlState.of(CommandCodec.readImage(new ByteArrayInputStream(bytes)));
    assertThat(snapshotJson(loaded)).isEqualTo(text(SNAPSHOT).strip());
  }

  private static io.kairos.protocol.agent.Registration registration(String node) {
    var gpus = new ArrayList<io.kairos.protocol.GpuDevice>();
    for (int i = 0; i < 2; i++) {
      gpus.add(new io.kairos.protocol.GpuDevice(i, "GPU-" + node + "-" + i, "H100", 80L << 30));
    }
    return new io.kairos.protocol.agent.Registration(
        node, "http://127.0.0.1:1", gpus, 64, 512L << 30, Map.of(), "z", "b", "r", 2);
  }

  private static JobRequest checkpointable() {
    return new JobRequest(
        "train",
        List.of("python3", "train.py"),
        Map.of(),
        "",
        2,
        0,
        0,
        0,
        3600,
        "default",
        0,
        "",
        "alice",
        "TERM",
        30,
        null,
        0,
        "",
        0,
        List.of(),
        null,
        null,
        "",
        "",
        "",
        "",
        "alice",
        null,
        null,
        0,
        new CheckpointPolicy("USR1", 60, 600, 3),
        0);
  }

  private static TaskPlacement task(int rank, String node) {
    return new TaskPlacement(rank, node, List.of(0, 1));
  }
}

package io.kairos.control.raft;

import static io.kairos.control.raft.GoldenLogs.json;
import static io.kairos.control.raft.GoldenLogs.lines;
import static io.kairos.control.raft.GoldenLogs.snapshotJson;
import static io.kairos.control.raft.GoldenLogs.text;
import static io.kairos.control.raft.GoldenLogs.withFormat;
import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.control.state.ControlCommand;
import io.kairos.control.state.ControlCommand.ResizeJob;
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
 * The encodings of elastic jobs stay readable, to the byte, as {@link CommandCodecGoldenTest} keeps
 * the older ones: {@code elastic.log} is a controller's log of three 2-GPU nodes, an elastic job of
 * 2 to 6 GPUs (2 per node) started on one node, grown to three, shrunk by one rank (whose end is
 * then reported), and a stale resize; {@code elastic.results} what applying each answered; {@code
 * elastic.snapshot.json} the state after the log. The log must decode forever; if a command is
 * deliberately made to do something else, the results and the snapshot are rewritten from a replay
 * ({@code -Dkairos.codec.rewrite=true} writes all three from {@link #commands()} into the source
 * tree), and the log stays as it is.
 */
class ElasticCodecGoldenTest {
  private static final String LOG = "/codec/elastic.log";
  private static final String RESULTS = "/codec/elastic.results";
  private static final String SNAPSHOT = "/codec/elastic.snapshot.json";
  private static final long T0 = 1_700_000_000_000L;

  static List<ControlCommand> commands() {
    var out = new ArrayList<ControlCommand>();
    for (String n : List.of("n1", "n2", "n3")) {
      out.add(new ControlCommand.RegisterNode(T0, registration(n)));
    }
    out.add(new SubmitJobs(T0 + 1, List.of(elastic())));
    out.add(new StartJobs(T0 + 2, List.of(new ControlCommand.Start(1, List.of(task(0, "n1"))))));
    out.add(new ResizeJob(T0 + 3, 1, 1, 1, List.of(task(1, "n2"), task(2, "n3")), List.of(), 0));
    out.add(new ResizeJob(T0 + 4, 1, 1, 3, List.of(), List.of(2), 9));
    out.add(new TaskEnded(T0 + 5, "n3", 3, 1, 1, 2, 143, ExitReason.KILLED, "the job shrinks"));
    out.add(new ResizeJob(T0 + 6, 1, 1, 3, List.of(task(3, "n3")), List.of(), 0));
    return out;
  }

  @Test
  void everyLogEntryDecodesAndEncodesToTheSameBytes() {
    GoldenLogs.rewriteIfAsked("elastic", commands());
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
    assertThat(job.left).containsExactly(2);
    assertThat(job.resizes).hasSize(2);
    // The last entry is stale (3 live nodes before, but 2 are): refused.
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

  private static JobRequest elastic() {
    return new JobRequest(
        "elastic",
        List.of("torchrun", "train.py"),
        Map.of(),
        "",
        2,
        2,
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
        null,
        6);
  }

  private static TaskPlacement task(int rank, String node) {
    return new TaskPlacement(rank, node, List.of(0, 1));
  }
}

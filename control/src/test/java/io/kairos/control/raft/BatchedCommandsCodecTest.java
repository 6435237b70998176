package io.kairos.control.raft;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.control.state.ControlCommand;
import io.kairos.control.state.ControlCommand.AddTokens;
import io.kairos.control.state.ControlCommand.TaskEnded;
import io.kairos.control.state.ControlCommand.TasksEnded;
import io.kairos.control.state.ControlResult;
import io.kairos.control.state.TokenRecord;
import io.kairos.protocol.agent.ExitReason;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The log commands that group commit packs (task ends, step credentials) and their per-item results
 * survive the log's codec unchanged, under their own names ({@code tasksEnded}, {@code addTokens}),
 * each packed item keeping its own fields (a step's end, an exit reason).
 */
class BatchedCommandsCodecTest {
  @Test
  void packedTaskEndsAndTokensRoundTrip() {
    var ends =
        new TasksEnded(
            1_700_000_000_123L,
            List.of(
                new TaskEnded(1_700_000_000_100L, "n1", 3, 7, 1, 0, 0, null, null),
                new TaskEnded(
                    1_700_000_000_120L,
                    "n2",
                    4,
                    8,
                    2,
                    1,
                    137,
                    ExitReason.KILLED,
                    "cancelled",
                    5,
                    List.of(0, 137))));
    var tokens =
        new AddTokens(
            1_700_000_000_200L,
            List.of(
                TokenRecord.stepCredential("h1", "alice", 1L, TokenRecord.jobScope(7, 1)),
                TokenRecord.stepCredential("h2", "bob", 2L, TokenRecord.jobScope(8, 2))));
    for (ControlCommand c : List.<ControlCommand>of(ends, tokens)) {
      byte[] bytes = CommandCodec.encode(c);
      assertThat(CommandCodec.decode(bytes)).isEqualTo(c);
      assertThat(CommandCodec.encode(CommandCodec.decode(bytes))).isEqualTo(bytes);
    }
    assertThat(new String(CommandCodec.encode(ends), StandardCharsets.ISO_8859_1))
        .contains("\"op\":\"tasksEnded\"");
    assertThat(new String(CommandCodec.encode(tokens), StandardCharsets.ISO_8859_1))
        .contains("\"op\":\"addTokens\"");
    var result =
        ControlResult.ofItems(List.of(ControlResult.OK, ControlResult.conflict("stale attempt")));
    assertThat(CommandCodec.decodeResult(CommandCodec.encodeResult(result))).isEqualTo(result);
  }
}

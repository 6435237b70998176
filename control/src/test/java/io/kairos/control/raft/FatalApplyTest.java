package io.kairos.control.raft;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.StateMachineLogEntryProto;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.Test;

/**
 * A log entry the state machine cannot apply is fatal: it goes to the fatal handler (which stops
 * the process) rather than only to Ratis, which would close the server and leave the API serving.
 */
class FatalApplyTest {
  @Test
  void anEntryThatCannotBeAppliedIsFatal() {
    var fatal = new ArrayList<String>();
    var sm = new KairosStateMachine((what, e) -> fatal.add(what + ": " + e.getMessage()));
    var entry =
        LogEntryProto.newBuilder()
            .setTerm(1)
            .setIndex(7)
            .setStateMachineLogEntry(
                StateMachineLogEntryProto.newBuilder()
                    .setLogData(ByteString.copyFrom(new byte[] {9, 9, 9})))
            .build();
    var trx = TransactionContext.newBuilder().setStateMachine(sm).setLogEntry(entry).build();

    var result = sm.applyTransaction(trx);

    assertThat(result).isCompletedExceptionally();
    assertThat(fatal).singleElement().satisfies(f -> assertThat(f).contains("log entry 7"));
    assertThat(List.copyOf(fatal).getFirst()).contains("unknown log entry format");
  }
}

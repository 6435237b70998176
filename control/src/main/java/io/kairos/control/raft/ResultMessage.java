package io.kairos.control.raft;

import io.kairos.control.state.ControlResult;
import java.util.function.Supplier;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.MemoizedSupplier;

/**
 * A command's result as Ratis' reply message, encoded only when something reads its bytes (a reply
 * that crosses the wire to a follower's client), and then on that thread: a command the leader
 * proposed itself hands the result object back ({@link RaftReplica}), so the apply thread neither
 * encodes it nor the proposer decodes it.
 */
final class ResultMessage implements Message {
  private final ControlResult result;
  private final Supplier<ByteString> content;

  ResultMessage(ControlResult result) {
    this.result = result;
    this.content =
        MemoizedSupplier.valueOf(() -> ByteString.copyFrom(CommandCodec.encodeResult(result)));
  }

  ControlResult result() {
    return result;
  }

  @Override
  public ByteString getContent() {
    return content.get();
  }

  @Override
  public String toString() {
    return "ResultMessage(" + result.status() + ", " + result.ids().size() + " ids)";
  }
}

package io.kairos.control.raft;

import io.kairos.control.state.ControlCommand;
import io.kairos.control.state.ControlCommand.AddToken;
import io.kairos.control.state.ControlCommand.AddTokens;
import io.kairos.control.state.ControlResult;
import io.kairos.control.state.TokenRecord;
import java.io.Closeable;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Packs tokens added together into one {@link AddTokens} log entry ({@link GroupCommit}): every job
 * start brings its step credential, and with a thousand short jobs starting a second one {@link
 * AddToken} entry each was three fifths of the log's entries (counted in a 1,000 submits/s run),
 * bringing every snapshot that much closer. A token alone is its own {@link AddToken} entry, as
 * before. Each caller gets what its own token answered.
 */
public final class TokenBatcher implements Closeable {
  /** Tokens per entry (a step credential is about 250 bytes in the log). */
  static final int MAX_PER_ENTRY = 1_000;

  private final GroupCommit<TokenRecord, ControlResult> commits;

  public TokenBatcher(RaftReplica replica, InstantSource clock) {
    this.commits =
        new GroupCommit<>("kairos-token-batcher", replica, new Tokens(clock), MAX_PER_ENTRY);
  }

  /** Queues a token for the next entry; completes with what applying it answered. */
  public CompletableFuture<ControlResult> add(TokenRecord token) {
    return commits.add(token);
  }

  @Override
  public void close() {
    commits.close();
  }

  private record Tokens(InstantSource clock)
      implements GroupCommit.Packing<TokenRecord, ControlResult> {
    @Override
    public int weight(TokenRecord item) {
      return 1;
    }

    @Override
    public ControlCommand pack(List<TokenRecord> items, int weight) {
      return items.size() == 1
          ? new AddToken(clock.millis(), items.getFirst())
          : new AddTokens(clock.millis(), items);
    }

    @Override
    public void unpack(
        List<TokenRecord> items,
        ControlResult result,
        List<CompletableFuture<ControlResult>> done) {
      if (items.size() == 1) {
        done.getFirst().complete(result);
        return;
      }
      if (result.items().size() != items.size()) { // a replica that does not know the command
        throw new IllegalStateException(
            "the log answered " + result.items().size() + " of " + items.size() + " tokens");
      }
      for (int i = 0; i < items.size(); i++) {
        done.get(i).complete(result.items().get(i));
      }
    }
  }
}

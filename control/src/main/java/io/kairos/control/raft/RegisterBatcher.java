package io.kairos.control.raft;

import io.kairos.control.state.ControlCommand;
import io.kairos.control.state.ControlCommand.RegisterNode;
import io.kairos.control.state.ControlCommand.RegisterNodes;
import io.kairos.control.state.ControlResult;
import java.io.Closeable;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Packs registrations that arrive together into one {@link RegisterNodes} log entry ({@link
 * GroupCommit}): when a site's agents all start at once (a power cycle, a controller upgrade), ten
 * thousand registrations cost tens of log entries, not ten thousand. A registration alone is its
 * own {@link RegisterNode} entry, as before. Each caller gets what its own registration answered.
 */
public final class RegisterBatcher implements Closeable {
  /** Registrations per entry (a registration is about a kilobyte in the log). */
  static final int MAX_PER_ENTRY = 256;

  private final GroupCommit<RegisterNode, ControlResult> commits;

  public RegisterBatcher(RaftReplica replica, InstantSource clock) {
    this.commits =
        new GroupCommit<>(
            "kairos-register-batcher", replica, new Registrations(clock), MAX_PER_ENTRY);
  }

  /** Queues a registration for the next entry; completes with what applying it answered. */
  public CompletableFuture<ControlResult> register(RegisterNode registration) {
    return commits.add(registration);
  }

  @Override
  public void close() {
    commits.close();
  }

  private record Registrations(InstantSource clock)
      implements GroupCommit.Packing<RegisterNode, ControlResult> {
    @Override
    public int weight(RegisterNode item) {
      return 1;
    }

    @Override
    public ControlCommand pack(List<RegisterNode> items, int weight) {
      return items.size() == 1 ? items.getFirst() : new RegisterNodes(clock.millis(), items);
    }

    @Override
    public void unpack(
        List<RegisterNode> items,
        ControlResult result,
        List<CompletableFuture<ControlResult>> done) {
      if (items.size() == 1) {
        done.getFirst().complete(result);
        return;
      }
      if (result.items().size() != items.size()) { // a replica that does not know the command
        throw new IllegalStateException(
            "the log answered " + result.items().size() + " of " + items.size() + " registrations");
      }
      for (int i = 0; i < items.size(); i++) {
        done.get(i).complete(result.items().get(i));
      }
    }
  }
}

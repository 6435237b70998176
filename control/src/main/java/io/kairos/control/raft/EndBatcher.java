package io.kairos.control.raft;

import io.kairos.control.state.ControlCommand;
import io.kairos.control.state.ControlCommand.TaskEnded;
import io.kairos.control.state.ControlCommand.TasksEnded;
import io.kairos.control.state.ControlResult;
import java.io.Closeable;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Packs the task ends that agents report together into one {@link TasksEnded} log entry ({@link
 * GroupCommit}), as {@link RegisterBatcher} does registrations: with a thousand short jobs ending a
 * second, one {@link TaskEnded} entry each took the log's append lock a thousand times a second
 * (JFR: submits waited 40 ms on average for it) and brought the next snapshot closer by as many
 * entries. An end alone is its own {@link TaskEnded} entry, as before. Each caller gets what its
 * own end answered.
 */
public final class EndBatcher implements Closeable {
  /** Task ends per entry (one is about 200 bytes in the log). */
  static final int MAX_PER_ENTRY = 1_000;

  private final GroupCommit<TaskEnded, ControlResult> commits;

  public EndBatcher(RaftReplica replica) {
    this.commits = new GroupCommit<>("kairos-end-batcher", replica, new Ends(), MAX_PER_ENTRY);
  }

  /** Queues a task end for the next entry; completes with what applying it answered. */
  public CompletableFuture<ControlResult> end(TaskEnded end) {
    return commits.add(end);
  }

  @Override
  public void close() {
    commits.close();
  }

  private record Ends() implements GroupCommit.Packing<TaskEnded, ControlResult> {
    @Override
    public int weight(TaskEnded item) {
      return 1;
    }

    /** Stamped with the latest of the ends' times (each end keeps its own). */
    @Override
    public ControlCommand pack(List<TaskEnded> items, int weight) {
      if (items.size() == 1) {
        return items.getFirst();
      }
      long at = items.stream().mapToLong(TaskEnded::atMs).max().orElseThrow();
      return new TasksEnded(at, items);
    }

    @Override
    public void unpack(
        List<TaskEnded> items, ControlResult result, List<CompletableFuture<ControlResult>> done) {
      if (items.size() == 1) {
        done.getFirst().complete(result);
        return;
      }
      if (result.items().size() != items.size()) { // a replica that does not know the command
        throw new IllegalStateException(
            "the log answered " + result.items().size() + " of " + items.size() + " task ends");
      }
      for (int i = 0; i < items.size(); i++) {
        done.get(i).complete(result.items().get(i));
      }
    }
  }
}

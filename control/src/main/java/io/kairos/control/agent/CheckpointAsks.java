package io.kairos.control.agent;

import io.kairos.protocol.agent.TaskKill;
import java.util.List;
import java.util.Set;

/**
 * The checkpoint requests a leader has sent: while a preemption waits for a checkpoint, every plan
 * for the node names the request again ({@link TaskKill#askCheckpoint}), and the agent sends the
 * signal once per attempt; so only a request not sent before is news that ends a long poll.
 */
final class CheckpointAsks {
  /** Beyond this many remembered requests, the memory starts afresh (a request is sent again). */
  static final int MAX_REMEMBERED = 100_000;

  private CheckpointAsks() {}

  /** Whether {@code kills} hold anything the node has not been sent: a stop, or a new request. */
  static boolean news(Set<String> asked, String node, List<TaskKill> kills) {
    boolean news = false;
    for (TaskKill k : kills) {
      if (k.checkpointSignal() == null) {
        news = true;
      } else {
        if (asked.size() > MAX_REMEMBERED) {
          asked.clear();
        }
        news |= asked.add(node + ":" + k.jobId() + ":" + k.attempt());
      }
    }
    return news;
  }
}

package io.kairos.agent;

import io.kairos.protocol.agent.TaskAssignment;
import io.kairos.protocol.agent.TaskStatus;
import java.util.Collection;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's last line against two tasks on one GPU: a task is not started while a task of another
 * job, or of another attempt of its job, that this agent still holds alive (starting, ready,
 * running or stopping, adopted ones included) has one of its GPUs. (A job's own steps share its
 * allocation.) The controller frees a GPU only once the node has confirmed the task on it ended,
 * but a restarted agent may have adopted a task of an attempt the controller has already given up
 * on: that task is being stopped while the controller may place the next job on its GPUs. The
 * assignment is not taken then; the controller sends it again with every heartbeat until it is, so
 * it starts once the old task has exited.
 */
final class GpuGuard {
  private static final Logger log = LoggerFactory.getLogger(GpuGuard.class);

  /** Assignments already logged as deferred, so a heartbeat loop logs each once. */
  private static final Set<TaskKey> told = ConcurrentHashMap.newKeySet();

  private GpuGuard() {}

  /**
   * Whether {@code a} must wait: a live task among {@code held} has one of its GPUs. Logs the first
   * time it says so for a task. Call under the table's lock.
   */
  static boolean mustWait(TaskKey key, TaskAssignment a, Collection<HeldTask> held) {
    if (a.gpus() == null || a.gpus().isEmpty()) {
      return false;
    }
    Set<Integer> wanted = new HashSet<>(a.gpus());
    for (HeldTask t : held) {
      if (t.status == TaskStatus.EXITED || t.assignment.gpus() == null) {
        continue;
      }
      if (t.key.jobId() == key.jobId() && t.key.attempt() == key.attempt()) {
        continue; // the same allocation: a job's srun steps share its GPUs with its batch step
      }
      for (Integer g : t.assignment.gpus()) {
        if (wanted.contains(g)) {
          if (told.add(key)) {
            log.warn(
                "{}: not started yet: GPU {} is still held by task {} ({}); it starts once that"
                    + " task has exited",
                key,
                g,
                t.key,
                t.status);
          }
          return true;
        }
      }
    }
    told.remove(key);
    return false;
  }
}

package io.kairos.core.command;

import io.kairos.core.model.Job;
import io.kairos.core.model.JobId;
import io.kairos.core.model.Placement;

/** Everything that changes cluster state. Applied in log order by the reducer. */
public sealed interface Command {
  /** When the change happened, in seconds: stamped by the leader or the trace, never read. */
  long atSec();

  /** A job arrives and waits. */
  record SubmitJob(long atSec, Job job) implements Command {}

  /** A pending job's whole gang starts on {@code placement} (GPU masks chosen). */
  record StartJob(long atSec, JobId job, Placement placement) implements Command {}

  /** A running job's gang ended (all tasks), releasing its GPUs. */
  record FinishJob(long atSec, JobId job, int exitCode) implements Command {}

  /**
   * A running job is stopped and goes back to waiting (a preemption's victim, once its grace is
   * over): its GPUs are freed, it keeps its id, spec and submit time, and it is eligible to start
   * again from {@code atSec} (so order keys that read the eligible time see it as waiting since the
   * requeue).
   */
  record RequeueJob(long atSec, JobId job) implements Command {}

  /** A pending or running job is removed by its user or an admin. */
  record CancelJob(long atSec, JobId job, String reason) implements Command {}

  /**
   * A node stops (or resumes) taking new work: its running jobs go on, but no pass places a job on
   * it while it is cordoned (a drained or unhealthy node).
   */
  record CordonNode(long atSec, String node, boolean cordoned) implements Command {}

  /**
   * A stopping job's tasks on {@code node} have confirmed their end: their GPUs, CPUs and memory
   * there are free now, while the job keeps what it holds on its other nodes until those confirm
   * too (then {@link FinishJob} or {@link RequeueJob} frees the rest).
   */
  record ReleaseTasks(long atSec, JobId job, String node) implements Command {}

  /**
   * A job is put back as one that started at {@code atSec} and is stopping, holding only {@code
   * held} (a part of its gang: its other tasks have stopped and let their GPUs go). For a store
   * rebuilt from records while a job stops, so the job need not fit the cluster any more (a node
   * that came back smaller); {@link SubmitJob} and {@link StartJob} for a whole gang.
   */
  record ResumeStopping(long atSec, Job job, Placement held) implements Command {}

  /**
   * GPU {@code gpu} of {@code node} is taken out of service ({@code inService} false: unhealthy) or
   * returned to it. No pass places a job on an out-of-service GPU; a job holding it keeps it until
   * its driver stops the job.
   */
  record GpuService(long atSec, String node, int gpu, boolean inService) implements Command {}

  /**
   * A running elastic job changes size to {@code placement}: its whole new placement, which keeps
   * every node it holds and still uses with the same GPUs, adds whole free nodes (growing) or drops
   * whole nodes (shrinking, once their tasks have stopped), and holds between the gang's minimum
   * and maximum tasks. Refused, changing nothing, otherwise.
   *
   * @param anchorNode the node of the job's first task (its rendezvous), which {@code placement}
   *     must hold; -1 keeps the one it has (a driver that rebuilds a store names it again)
   */
  record ResizeJob(long atSec, JobId job, Placement placement, int anchorNode) implements Command {
    /** A resize that keeps the job's first node. */
    public ResizeJob(long atSec, JobId job, Placement placement) {
      this(atSec, job, placement, -1);
    }
  }
}

package io.kairos.core.state;

import io.kairos.core.command.Applied;
import io.kairos.core.command.Command;
import io.kairos.core.command.Command.CancelJob;
import io.kairos.core.command.Command.CordonNode;
import io.kairos.core.command.Command.FinishJob;
import io.kairos.core.command.Command.GpuService;
import io.kairos.core.command.Command.ReleaseTasks;
import io.kairos.core.command.Command.RequeueJob;
import io.kairos.core.command.Command.ResizeJob;
import io.kairos.core.command.Command.ResumeStopping;
import io.kairos.core.command.Command.StartJob;
import io.kairos.core.command.Command.SubmitJob;

/** Applies commands to a store. Deterministic: no clock, no randomness, no I/O. */
public final class Reducer {
  private Reducer() {}

  /** Applies one command; a command whose preconditions fail is refused and changes nothing. */
  public static Applied apply(ClusterStore store, Command command) {
    return switch (command) {
      case SubmitJob(var at, var job) -> store.addPending(job, at);
      case StartJob(var at, var job, var placement) -> store.start(job, placement, at);
      case FinishJob(var at, var job, _) -> store.finish(job, at);
      case RequeueJob(var at, var job) -> store.requeue(job, at);
      case CancelJob(var at, var job, _) -> store.cancel(job, at);
      case CordonNode(var at, var node, var cordoned) -> store.cordon(node, cordoned);
      case ReleaseTasks(var at, var job, var node) -> store.releaseTasks(job, node);
      case ResumeStopping(var at, var job, var held) -> store.resumeStopping(job, held, at);
      case GpuService(var at, var node, var gpu, var in) -> store.gpuService(node, gpu, in);
      case ResizeJob(var at, var job, var placement, var anchor) ->
          store.resize(job, placement, anchor);
    };
  }
}

package io.kairos.core.sched.preempt;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.core.command.Applied;
import io.kairos.core.command.Command.FinishJob;
import io.kairos.core.command.Command.StartJob;
import io.kairos.core.command.Command.SubmitJob;
import io.kairos.core.invariant.InvariantChecker;
import io.kairos.core.model.Cluster;
import io.kairos.core.model.GangSpec;
import io.kairos.core.model.Job;
import io.kairos.core.model.JobId;
import io.kairos.core.model.JobSpec;
import io.kairos.core.model.Placement;
import io.kairos.core.model.RunningJob;
import io.kairos.core.sched.place.GpuPicker;
import io.kairos.core.state.ClusterStore;
import io.kairos.core.state.Reducer;
import java.util.Collection;
import java.util.HashSet;
import java.util.Set;

/**
 * A store with running jobs placed by hand, and the checks every plan must pass: its placement
 * starts through the reducer once the victims are gone, and the invariants still hold.
 */
final class PreemptionFixture {
  static final long LIMIT_SEC = 3_600;

  final Cluster cluster;
  final ClusterStore store;

  PreemptionFixture(Cluster cluster) {
    this.cluster = cluster;
    this.store = new ClusterStore(cluster);
  }

  /** Starts job {@code id} at t=0 with {@code tasks[i]} tasks on node {@code nodes[i]}. */
  RunningJob run(long id, GangSpec gang, int[] nodes, int[] tasks) {
    var job = new Job(JobId.of(id), JobSpec.of(gang, LIMIT_SEC), 0);
    accept(Reducer.apply(store, new SubmitJob(0, job)));
    accept(
        Reducer.apply(
            store,
            new StartJob(
                0,
                job.id(),
                withMasks(Placement.of(nodes, tasks, new long[nodes.length]), gang, store))));
    return store.running(job.id()).orElseThrow();
  }

  /** {@code placement} with GPUs picked from what is free in {@code s} now. */
  static Placement withMasks(Placement placement, GangSpec gang, ClusterStore s) {
    var c = s.cluster();
    long[] masks = new long[placement.nodeCount()];
    for (int i = 0; i < masks.length; i++) {
      int node = placement.node(i);
      masks[i] =
          GpuPicker.pick(
              s.freeMask(node),
              c.gpuCount(node),
              c.nvlinkDomainSize(node),
              placement.tasksOn(i),
              gang.shape().gpus());
    }
    return placement.withGpuMasks(masks);
  }

  private static void accept(Applied applied) {
    assertThat(applied.isAccepted()).as("%s", applied).isTrue();
  }

  /**
   * Applies {@code plan} to {@code s}: finishes the victims, then submits and starts the preemptor
   * on the plan's placement; the reducer must accept it and the invariants must hold.
   */
  static void assertPlanStarts(
      ClusterStore s, PreemptionPlan plan, long preemptorId, JobSpec spec) {
    for (RunningJob victim : plan.victims()) {
      accept(Reducer.apply(s, new FinishJob(10, victim.id(), 143)));
    }
    var job = new Job(JobId.of(preemptorId), spec, 10);
    accept(Reducer.apply(s, new SubmitJob(10, job)));
    accept(
        Reducer.apply(s, new StartJob(10, job.id(), withMasks(plan.placement(), spec.gang(), s))));
    InvariantChecker.checkStore(s);
  }

  /**
   * An oracle independent of the placer: whether {@code gang} fits on what is free plus what {@code
   * victims} hold, counting per node the tasks its GPUs (and CPUs, memory) take, one per node for a
   * per-node gang, none on an excluded node.
   */
  static boolean fits(
      ClusterStore s, GangSpec gang, long[] excluded, Collection<RunningJob> victims) {
    var c = s.cluster();
    long[] mask = new long[c.nodeCount()];
    long[] cpus = new long[c.nodeCount()];
    for (int n = 0; n < mask.length; n++) {
      mask[n] = s.freeMask(n);
      cpus[n] = s.freeCpus(n);
    }
    Set<JobId> seen = new HashSet<>();
    for (RunningJob v : victims) {
      if (!seen.add(v.id())) {
        continue;
      }
      var p = v.placement();
      for (int i = 0; i < p.nodeCount(); i++) {
        mask[p.node(i)] |= p.gpuMask(i);
        cpus[p.node(i)] += (long) p.tasksOn(i) * v.job().spec().gang().shape().cpus();
      }
    }
    var shape = gang.shape();
    long tasks = 0;
    for (int n = 0; n < mask.length; n++) {
      if (excluded != null && Cluster.isSet(excluded, n)) {
        continue;
      }
      long fit = gang.tasks();
      if (shape.gpus() > 0) {
        fit = Math.min(fit, Long.bitCount(mask[n]) / shape.gpus());
      }
      if (shape.cpus() > 0) {
        fit = Math.min(fit, cpus[n] / shape.cpus());
      }
      tasks += gang.distinctNodes() ? Math.min(fit, 1) : fit;
    }
    return tasks >= gang.tasks();
  }
}

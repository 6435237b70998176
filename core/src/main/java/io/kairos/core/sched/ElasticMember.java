package io.kairos.core.sched;

import io.kairos.core.model.Job;
import io.kairos.core.model.Placement;
import io.kairos.core.model.RunningJob;
import java.util.Map;
import java.util.TreeMap;

/**
 * One elastic job the stage may resize: its nodes (one task each) and their GPUs as the stage
 * changes them, and what it held at the start of the stage.
 *
 * @param startedNow started by this pass (its start decision carries the new size); else running
 * @param anchor the node of a running job that the stage never removes: its first task's ({@link
 *     RunningJob#anchorNode()}), which hosts the job's rendezvous; -1 for a job started now
 */
record ElasticMember(
    Job job,
    long startSec,
    boolean startedNow,
    Placement before,
    int anchor,
    TreeMap<Integer, Long> nodes) {

  static ElasticMember running(RunningJob r) {
    return of(r.job(), r.startSec(), false, r.placement(), r.anchorNode());
  }

  static ElasticMember startedNow(Job job, long startSec, Placement placement) {
    return of(job, startSec, true, placement, -1);
  }

  private static ElasticMember of(
      Job job, long startSec, boolean startedNow, Placement placement, int anchor) {
    var nodes = new TreeMap<Integer, Long>();
    for (int i = 0; i < placement.nodeCount(); i++) {
      nodes.put(placement.node(i), placement.gpuMask(i));
    }
    return new ElasticMember(job, startSec, startedNow, placement, anchor, nodes);
  }

  /** The node that hosts the rendezvous: the anchor, else (started now) the lowest. */
  int first() {
    return anchor >= 0 ? anchor : nodes.firstKey();
  }

  int size() {
    return nodes.size();
  }

  int min() {
    return job.spec().gang().tasks();
  }

  int max() {
    return job.spec().gang().maxTasks();
  }

  int priority() {
    return job.spec().priority();
  }

  long endLimitSec() {
    return startSec + job.timeLimitSec();
  }

  boolean changed() {
    return !placement().equals(before);
  }

  /** The current nodes as a placement (ascending nodes, one task each). */
  Placement placement() {
    int n = nodes.size();
    int[] nodeIndexes = new int[n];
    int[] tasks = new int[n];
    long[] masks = new long[n];
    int i = 0;
    for (Map.Entry<Integer, Long> e : nodes.entrySet()) {
      nodeIndexes[i] = e.getKey();
      tasks[i] = 1;
      masks[i] = e.getValue();
      i++;
    }
    return Placement.adopt(nodeIndexes, tasks, masks);
  }
}

package io.kairos.testkit;

import io.kairos.core.model.Job;
import io.kairos.core.model.JobId;
import io.kairos.core.model.RunningJob;
import io.kairos.core.state.ClusterStore;
import java.util.List;

/**
 * Everything observable in a {@link ClusterStore}, as a value: two stores (or one store before and
 * after a refused command) are in the same state exactly when their StoreStates are equal.
 */
public record StoreState(
    List<Long> freeMasks,
    List<Integer> freeCpus,
    List<Long> freeMemoryBytes,
    long freeGpus,
    List<Job> pending,
    List<RunningJob> running) {

  public static StoreState of(ClusterStore store) {
    int n = store.cluster().nodeCount();
    var masks = new Long[n];
    var cpus = new Integer[n];
    var memory = new Long[n];
    for (int i = 0; i < n; i++) {
      masks[i] = store.freeMask(i);
      cpus[i] = store.freeCpus(i);
      memory[i] = store.freeMemoryBytes(i);
    }
    return new StoreState(
        List.of(masks),
        List.of(cpus),
        List.of(memory),
        store.freeGpus(),
        List.copyOf(store.pendingJobs()),
        List.copyOf(store.runningJobs()));
  }

  public List<JobId> pendingIds() {
    return pending.stream().map(Job::id).toList();
  }

  public List<JobId> runningIds() {
    return running.stream().map(RunningJob::id).toList();
  }
}

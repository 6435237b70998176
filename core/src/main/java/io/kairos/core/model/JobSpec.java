package io.kairos.core.model;

import io.kairos.core.Checks;
import java.util.Collections;
import java.util.Objects;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * What a user asked for.
 *
 * @param user who submitted it
 * @param queue the queue it was submitted to
 * @param priority higher runs first; 0 is the default
 * @param gang the tasks, placed all-or-nothing
 * @param timeLimitSec the runtime estimate; the job is stopped when it runs this long, and
 *     reservations assume it runs exactly this long
 * @param gpuModel the GPU model every task needs, or empty for any
 * @param excludedNodes names of nodes no task of the job may run on (Slurm's {@code --exclude}; the
 *     controller adds a failed node when it requeues the job). Sorted and immutable; names the
 *     cluster does not have exclude nothing. A job whose exclusions leave too few nodes for its
 *     gang is refused at submission, like a job larger than the cluster.
 * @param account the fair-share account charged for it; empty: its queue's default account, else
 *     the user ({@link io.kairos.core.tenancy.Tenants#accountOf})
 * @param priorityClass the name of its priority class, or empty for none; the submitter resolves it
 *     to {@code priority} (the class's value), and the pass reads it for preemptibility
 */
public record JobSpec(
    String user,
    String queue,
    int priority,
    GangSpec gang,
    long timeLimitSec,
    String gpuModel,
    Set<String> excludedNodes,
    String account,
    String priorityClass) {
  private static final SortedSet<String> NONE = Collections.emptySortedSet();

  public JobSpec {
    Objects.requireNonNull(user, "user");
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(gang, "gang");
    Objects.requireNonNull(gpuModel, "gpuModel");
    Checks.positive(timeLimitSec, "timeLimitSec");
    Objects.requireNonNull(excludedNodes, "excludedNodes");
    Objects.requireNonNull(account, "account");
    Objects.requireNonNull(priorityClass, "priorityClass");
    if (excludedNodes.isEmpty()) {
      excludedNodes = NONE; // the common case: one shared value, nothing copied
    } else {
      var sorted = new TreeSet<String>();
      for (String name : excludedNodes) {
        Objects.requireNonNull(name, "excludedNodes element");
        Checks.argument(!name.isBlank(), () -> "excludedNodes must not hold a blank name");
        sorted.add(name);
      }
      excludedNodes = Collections.unmodifiableSortedSet(sorted);
    }
  }

  /** A spec that may use every node. */
  public JobSpec(
      String user, String queue, int priority, GangSpec gang, long timeLimitSec, String gpuModel) {
    this(user, queue, priority, gang, timeLimitSec, gpuModel, NONE);
  }

  /** A spec without an account or priority class of its own. */
  public JobSpec(
      String user,
      String queue,
      int priority,
      GangSpec gang,
      long timeLimitSec,
      String gpuModel,
      Set<String> excludedNodes) {
    this(user, queue, priority, gang, timeLimitSec, gpuModel, excludedNodes, "", "");
  }

  public static JobSpec of(GangSpec gang, long timeLimitSec) {
    return new JobSpec("nobody", "default", 0, gang, timeLimitSec, "");
  }

  /** This spec with {@code nodes} as its excluded nodes (replacing any it had). */
  public JobSpec withExcludedNodes(Set<String> nodes) {
    return new JobSpec(
        user, queue, priority, gang, timeLimitSec, gpuModel, nodes, account, priorityClass);
  }

  /**
   * This spec charged to {@code account}, in {@code priorityClass} with its {@code priority} value
   * (empty strings for none).
   */
  public JobSpec withTenancy(String account, String priorityClass, int priority) {
    return new JobSpec(
        user, queue, priority, gang, timeLimitSec, gpuModel, excludedNodes, account, priorityClass);
  }

  public boolean hasExclusions() {
    return !excludedNodes.isEmpty();
  }

  public int totalGpus() {
    return gang.totalGpus();
  }
}

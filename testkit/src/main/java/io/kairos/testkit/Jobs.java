package io.kairos.testkit;

import io.kairos.core.model.GangSpec;
import io.kairos.core.model.JobSpec;
import io.kairos.core.model.TaskShape;
import java.util.Set;

/**
 * Job builders for tests: a test states only what matters to it, the defaults are valid and boring
 * (user "u", queue "default", priority 0, any GPU model, a one-hour limit).
 *
 * <pre>{@code
 * h.submit(Jobs.gpus(4).limit(100));                 // 4 one-GPU tasks, anywhere
 * h.submit(Jobs.perNode(16, 8).limit(3600).priority(5)); // 2 tasks of 8 GPUs on distinct nodes
 * }</pre>
 */
public final class Jobs {
  public static final long DEFAULT_LIMIT_SEC = 3600;

  private Jobs() {}

  /** {@code gpus} one-GPU tasks that may share nodes (a flexible gang). */
  public static Builder gpus(int gpus) {
    return new Builder(GangSpec.flexible(gpus));
  }

  /** {@code gpus / gpusPerNode} tasks of {@code gpusPerNode} GPUs, each on its own node. */
  public static Builder perNode(int gpus, int gpusPerNode) {
    return new Builder(GangSpec.perNode(gpus, gpusPerNode));
  }

  /** {@code tasks} tasks of {@code gpusPerTask} GPUs that may share nodes. */
  public static Builder tasks(int tasks, int gpusPerTask) {
    return new Builder(new GangSpec(tasks, TaskShape.gpus(gpusPerTask), false));
  }

  /** An elastic gang of {@code minGpus} to {@code maxGpus} GPUs, {@code gpusPerNode} per node. */
  public static Builder elastic(int minGpus, int maxGpus, int gpusPerNode) {
    return new Builder(GangSpec.elastic(minGpus, maxGpus, gpusPerNode));
  }

  public static Builder gang(GangSpec gang) {
    return new Builder(gang);
  }

  /** A mutable builder; {@link #build()} may be called any number of times. */
  public static final class Builder {
    private GangSpec gang;
    private long limitSec = DEFAULT_LIMIT_SEC;
    private int priority;
    private String user = "u";
    private String queue = "default";
    private String model = "";
    private long runtimeSec = -1;
    private long eligibleSec = -1;
    private Set<String> excludedNodes = Set.of();
    private String account = "";
    private String priorityClass = "";

    private Builder(GangSpec gang) {
      this.gang = gang;
    }

    /**
     * Spreads the builder's GPUs over distinct nodes, {@code gpusPerNode} each: {@code
     * Jobs.gpus(16).perNode(8)} is {@code Jobs.perNode(16, 8)}.
     */
    public Builder perNode(int gpusPerNode) {
      this.gang = GangSpec.perNode(gang.totalGpus(), gpusPerNode);
      return this;
    }

    public Builder limit(long limitSec) {
      this.limitSec = limitSec;
      return this;
    }

    public Builder priority(int priority) {
      this.priority = priority;
      return this;
    }

    public Builder user(String user) {
      this.user = user;
      return this;
    }

    public Builder queue(String queue) {
      this.queue = queue;
      return this;
    }

    public Builder model(String gpuModel) {
      this.model = gpuModel;
      return this;
    }

    /** How long the job really runs in the harness (default: its limit). Not part of the spec. */
    public Builder runtime(long runtimeSec) {
      this.runtimeSec = runtimeSec;
      return this;
    }

    /** The runtime set with {@link #runtime}, or -1 for "its time limit". */
    public long runtimeSec() {
      return runtimeSec;
    }

    /**
     * Holds the job until {@code sec} (absolute, like a begin time); not part of the spec, the
     * harness puts it on the submitted {@code Job}.
     */
    public Builder eligibleAt(long sec) {
      this.eligibleSec = sec;
      return this;
    }

    /** The time set with {@link #eligibleAt}, or -1 for "when it arrives". */
    public long eligibleSec() {
      return eligibleSec;
    }

    /** The fair-share account charged. */
    public Builder account(String account) {
      this.account = account;
      return this;
    }

    /** The priority class (the caller resolves its value into {@link #priority}). */
    public Builder priorityClass(String name) {
      this.priorityClass = name;
      return this;
    }

    /** Nodes no task of the job may run on (by name). */
    public Builder exclude(String... nodes) {
      this.excludedNodes = Set.of(nodes);
      return this;
    }

    public JobSpec build() {
      return new JobSpec(
          user, queue, priority, gang, limitSec, model, excludedNodes, account, priorityClass);
    }
  }
}

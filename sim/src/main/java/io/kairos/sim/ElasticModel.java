package io.kairos.sim;

import io.kairos.core.model.Cluster;
import io.kairos.core.model.GangSpec;
import io.kairos.sim.trace.TraceJob;
import java.util.SplittableRandom;

/**
 * The simulator's model of elastic and checkpointed jobs ({@code --elastic-share}, {@code
 * --checkpoint-cost}); {@link #NONE} leaves every job as the trace has it.
 *
 * <p><b>Which jobs are elastic.</b> A job is eligible when it uses at least 2 GPUs in whole nodes:
 * with {@code G} its GPUs per node (the trace's, else the cluster's largest node), its GPUs are a
 * multiple of {@code G}. It is chosen with probability {@code elasticShare}, by a draw seeded by
 * the run's seed and the job's trace id only (so the choice does not depend on the other jobs or
 * the policy). An elastic job of {@code n = gpus / G} nodes runs on {@code max(1, n / 2)} to {@code
 * min(2n, nodes of the cluster)} nodes of {@code G} GPUs each (a range of one size leaves it
 * fixed). Its work is the trace's GPU-seconds ({@code duration x gpus}); at {@code g} GPUs it does
 * {@code g} GPU-seconds per second (linear scaling), so at its trace size it runs as long as the
 * trace says. Its time limit is the trace's, times {@code gpus / minimum GPUs} (the run at its
 * minimum size).
 *
 * <p><b>Checkpoint cost.</b> With {@code checkpointCostSec > 0} every job is checkpointable: a
 * preempted job writes a checkpoint and stops {@code checkpointCostSec} after its signal (instead
 * of its grace), keeping all its work up to the signal; it loses only the checkpoint's time on its
 * GPUs. Each resize of an elastic job is a checkpoint and a restart at the new size: the job makes
 * no progress for {@code checkpointCostSec} after the resize. Periodic checkpoints ({@code
 * --checkpoint-every}, under a tenancy) cost nothing; a job preempted without a cost keeps the work
 * saved at its last periodic checkpoint (or at its last resize, whichever is later).
 *
 * @param elasticShare the share of eligible jobs that become elastic, in [0, 1]
 * @param checkpointCostSec seconds a checkpoint on demand takes (preemption, resize); 0: free
 */
public record ElasticModel(double elasticShare, long checkpointCostSec) {
  /** Every job as the trace has it, and checkpoints that cost nothing. */
  public static final ElasticModel NONE = new ElasticModel(0, 0);

  /** The largest checkpoint cost accepted (a week). */
  public static final long MAX_CHECKPOINT_COST_SEC = 7 * 86_400L;

  public ElasticModel {
    if (!(elasticShare >= 0 && elasticShare <= 1)) {
      throw new IllegalArgumentException(
          "--elastic-share must be a fraction between 0 and 1 (e.g. 0.5), got " + elasticShare);
    }
    if (checkpointCostSec < 0 || checkpointCostSec > MAX_CHECKPOINT_COST_SEC) {
      throw new IllegalArgumentException(
          "--checkpoint-cost must be between 0 and 7d (e.g. 60s or 2m), got "
              + checkpointCostSec
              + " s");
    }
  }

  /** Whether the model changes anything: some jobs may be elastic, or checkpoints cost time. */
  public boolean enabled() {
    return elasticShare > 0 || checkpointCostSec > 0;
  }

  /**
   * The elastic gang of {@code job} on {@code cluster} under this model, or null when the job stays
   * as the trace has it (not eligible, not drawn, or a range of one size).
   */
  GangSpec elasticGang(TraceJob job, Cluster cluster, long seed) {
    if (elasticShare <= 0) {
      return null;
    }
    int perNode = job.gpusPerNode() > 0 ? job.gpusPerNode() : cluster.maxGpusPerNode();
    if (job.gpus() < 2 || perNode < 1 || job.gpus() % perNode != 0) {
      return null;
    }
    if (draw(seed, job.id()) >= elasticShare) {
      return null;
    }
    int nodes = job.gpus() / perNode;
    int min = Math.max(1, nodes / 2);
    int max = (int) Math.min(Math.min(2L * nodes, cluster.nodeCount()), GangSpec.MAX_TASKS);
    if (max <= min) {
      return null;
    }
    return GangSpec.elastic(min * perNode, max * perNode, perNode);
  }

  /** The elastic job's time limit: the trace's, stretched to its minimum size (rounded up). */
  static long elasticLimit(TraceJob job, GangSpec gang) {
    long min = gang.totalGpus();
    double scaled = Math.ceil((double) job.timeLimitSec() * job.gpus() / min);
    return (long) Math.min(scaled, Simulator.MAX_TIME_SEC - job.submitSec());
  }

  /** A uniform draw in [0, 1) from the seed and the trace id alone. */
  static double draw(long seed, long traceId) {
    return new SplittableRandom(seed * 0x9E3779B97F4A7C15L + traceId).nextDouble();
  }
}

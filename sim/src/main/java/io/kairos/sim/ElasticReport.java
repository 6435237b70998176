package io.kairos.sim;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a run under an {@link ElasticModel} measured, beside the usual figures (utilization, JCT and
 * bounded slowdown are the report's own).
 *
 * @param elasticShare the model's share of eligible jobs made elastic
 * @param checkpointCostSec the model's checkpoint cost
 * @param elasticJobs jobs that were elastic
 * @param resizes resizes applied (grow or shrink, each a checkpoint and a restart)
 * @param grows of which grows
 * @param resizesRefused resizes the pass decided for a job being stopped (not applied, as the
 *     controller refuses them)
 * @param migrations moves of running jobs ({@code --migration}; else 0)
 * @param gpuHoursLostToPreemption GPU time preempted jobs ran since their last checkpoint, or spent
 *     writing the checkpoint of a preemption by checkpoint
 * @param gpuHoursLostToResizes GPU time spent in resizes' checkpoints and restarts
 */
public record ElasticReport(
    double elasticShare,
    long checkpointCostSec,
    int elasticJobs,
    int resizes,
    int grows,
    int resizesRefused,
    int migrations,
    double gpuHoursLostToPreemption,
    double gpuHoursLostToResizes) {

  /** The JSON fields (also the table's rows), in order. */
  public Map<String, Object> toMap() {
    var m = new LinkedHashMap<String, Object>();
    m.put("elastic_share", elasticShare);
    m.put("checkpoint_cost_s", checkpointCostSec);
    m.put("elastic_jobs", elasticJobs);
    m.put("resizes", resizes);
    m.put("grows", grows);
    m.put("resizes_refused", resizesRefused);
    m.put("migrations", migrations);
    m.put("gpu_hours_lost_to_preemption", SimReport.round(gpuHoursLostToPreemption));
    m.put("gpu_hours_lost_to_resizes", SimReport.round(gpuHoursLostToResizes));
    return m;
  }
}

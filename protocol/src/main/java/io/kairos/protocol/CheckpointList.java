package io.kairos.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * A job's checkpoints ({@code GET /api/v1/jobs/{id}/checkpoints}), and the reply to a report.
 *
 * @param job the job's id
 * @param signal the signal that asks it for a checkpoint
 * @param timeoutSec how long a preemption waits for the checkpoint it asks for
 * @param everySec how often the job checkpoints on its own; 0 for only when asked
 * @param keep how many checkpoints Kairos keeps
 * @param checkpoints the kept ones, oldest first (the last is the newest: the one a restart takes)
 * @param pruned in the reply to a report: checkpoints no longer kept, whose files the job's helper
 *     deletes; absent otherwise
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record CheckpointList(
    long job,
    String signal,
    long timeoutSec,
    long everySec,
    int keep,
    List<CheckpointView> checkpoints,
    List<CheckpointView> pruned) {}

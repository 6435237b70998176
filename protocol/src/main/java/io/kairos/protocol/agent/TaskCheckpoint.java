package io.kairos.protocol.agent;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * What a task of a checkpointing job is told about its checkpoints (as {@code KAIROS_CHECKPOINT_*}
 * variables). Its directory is the assignment's {@code checkpointDir}, else one the agent makes for
 * the job under its checkpoint root, private to the job's owner.
 *
 * @param signal the signal that asks for a checkpoint now
 * @param timeoutSec how long a preemption waits for the checkpoint after the signal
 * @param everySec how often the job should checkpoint on its own; 0 = only when asked
 * @param keep how many complete checkpoints are kept
 * @param restoreStep the newest checkpoint Kairos recorded for the job (any attempt); null for none
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record TaskCheckpoint(
    String signal, long timeoutSec, long everySec, int keep, Long restoreStep) {}

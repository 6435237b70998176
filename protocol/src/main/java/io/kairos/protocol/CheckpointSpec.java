package io.kairos.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * A job's declaration that it checkpoints (the {@code checkpoint} field of a submission): Kairos
 * then gives each task a private checkpoint directory, records the checkpoints the job reports,
 * keeps the latest {@code keep}, and preempts the job by asking for a checkpoint first.
 *
 * @param signal the signal that asks the job for a checkpoint now: TERM, INT, HUP, QUIT, USR1 or
 *     USR2 (a "SIG" prefix and lower case accepted); default USR1
 * @param timeout how long a preemption waits for the new checkpoint after the signal before it
 *     stops the job anyway, 1 second to 1 hour, in the forms of {@code timeLimit}; default 2m
 * @param every how often the job should checkpoint on its own (handed to it as {@code
 *     KAIROS_CHECKPOINT_EVERY}, in seconds), 0 or 1 second to 7 days; default 30m, 0 = only when
 *     asked
 * @param keep how many complete checkpoints are kept (older ones are pruned), 1 to 100; default 3
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record CheckpointSpec(String signal, String timeout, String every, Integer keep) {}

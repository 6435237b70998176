package io.kairos.protocol;

/**
 * One complete checkpoint of a job, as Kairos recorded it.
 *
 * @param step the training step it holds
 * @param attempt the job's attempt that wrote it
 * @param time when it was recorded (ISO-8601, UTC)
 * @param sizeBytes its size, as the job reported it
 * @param manifest its manifest, relative to the job's checkpoint directory
 * @param files how many shards the manifest names
 */
public record CheckpointView(
    long step, int attempt, String time, long sizeBytes, String manifest, int files) {}

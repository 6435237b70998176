package io.kairos.control.state;

/**
 * One complete checkpoint of a job, as the job reported it (its manifest written last).
 *
 * @param step the training step it holds
 * @param attempt the attempt that wrote it
 * @param atMs when it was recorded (the proposing replica's clock)
 * @param sizeBytes its size, as reported
 * @param manifest the manifest's path relative to the job's checkpoint directory (checked to stay
 *     inside it)
 * @param files how many shards the manifest names
 */
public record CheckpointEntry(
    long step, int attempt, long atMs, long sizeBytes, String manifest, int files) {}

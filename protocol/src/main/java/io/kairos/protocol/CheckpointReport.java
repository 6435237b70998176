package io.kairos.protocol;

import java.util.List;

/**
 * The body of {@code POST /api/v1/jobs/{id}/checkpoints}: a job reports a complete checkpoint, one
 * whose manifest rank 0 has written (last, by an atomic rename).
 *
 * @param step the training step the checkpoint holds (0 or more)
 * @param attempt the job's attempt that wrote it ({@code KAIROS_ATTEMPT}); default the current one
 * @param sizeBytes the checkpoint's size: its shards and manifest together
 * @param manifest the manifest's path, relative to the job's checkpoint directory, e.g. {@code
 *     step-00000120/MANIFEST.json}
 * @param files the shards the manifest names, relative to the checkpoint directory (at most {@value
 *     #MAX_FILES})
 */
public record CheckpointReport(
    Long step, Integer attempt, Long sizeBytes, String manifest, List<String> files) {
  public static final int MAX_FILES = 65_536;
}

package io.kairos.protocol;

import java.util.List;

/**
 * An elastic job's size, as the API shows it ({@link JobView#elastic}).
 *
 * @param nodes the nodes it runs on now (0 while it waits); during a shrink, those not yet let go
 * @param minNodes the fewest nodes it runs on ({@code gpus / gpusPerNode})
 * @param maxNodes the most ({@code maxGpus / gpusPerNode})
 * @param maxGpus the most GPUs it may grow to
 * @param resizes its latest resizes, oldest first, e.g. "2026-12-01T10:00:00Z: 1 -> 3 nodes (grew
 *     into idle nodes)"
 */
public record ElasticView(
    int nodes, int minNodes, int maxNodes, int maxGpus, List<String> resizes) {}

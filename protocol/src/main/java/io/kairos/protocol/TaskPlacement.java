package io.kairos.protocol;

import java.util.List;

/** One task (process) of a running job: its rank, its node and the GPU indexes it sees. */
public record TaskPlacement(int task, String node, List<Integer> gpus) {}

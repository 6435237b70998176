package io.kairos.protocol;

/** A queue's load ({@code GET /api/v1/queues}). */
public record QueueView(String name, int pending, int running, int gpusRunning, int gpusPending) {}

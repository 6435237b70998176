package io.kairos.protocol.agent;

/** Stop a task (cancelled, or not expected on this node any more). */
public record TaskKill(long jobId, int attempt, String reason) {}

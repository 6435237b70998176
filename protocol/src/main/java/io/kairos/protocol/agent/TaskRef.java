package io.kairos.protocol.agent;

/** Names one launch: the agent may forget an exited task the controller acknowledged. */
public record TaskRef(long jobId, int attempt, int task) {}

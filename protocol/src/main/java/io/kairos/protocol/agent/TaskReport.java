package io.kairos.protocol.agent;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * One task's state as its agent reports it in a heartbeat.
 *
 * @param exitCode set once EXITED: the process's exit code, or 128 + signal when killed
 * @param reason set once EXITED when the agent ended it (see {@link ExitReason}); null when the
 *     task ended on its own
 * @param startedAtMs epoch millis when the process started
 * @param endedAtMs epoch millis when it ended
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record TaskReport(
    long jobId,
    int attempt,
    int task,
    TaskStatus status,
    Integer exitCode,
    ExitReason reason,
    String message,
    Long startedAtMs,
    Long endedAtMs) {}

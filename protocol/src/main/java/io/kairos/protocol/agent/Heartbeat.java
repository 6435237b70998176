package io.kairos.protocol.agent;

import java.util.List;

/**
 * Sent every heartbeat interval, and at once when a task changes state.
 *
 * @param tasks every task the agent holds: running ones and exited ones not yet acknowledged
 * @param waitMs the controller may hold the reply this long when it has nothing to send (a long
 *     poll), so that a new assignment reaches the agent at once; 0 to reply immediately
 */
public record Heartbeat(String node, long epoch, List<TaskReport> tasks, long waitMs) {}

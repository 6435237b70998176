/**
 * The agent protocol: an agent registers its node ({@link io.kairos.protocol.agent.Registration}),
 * then heartbeats ({@link io.kairos.protocol.agent.Heartbeat}) with the state of every task it
 * holds; each reply ({@link io.kairos.protocol.agent.HeartbeatReply}) carries the tasks to launch
 * and to kill. The protocol is a reconciliation, idempotent by (job, attempt, task): a repeated
 * launch of a task the agent already runs or ran is ignored, and the agent keeps reporting a
 * finished task until the controller acknowledges it.
 *
 * <p>Endpoints (join token as bearer): {@code POST /api/v1/agents/register}, {@code POST
 * /api/v1/agents/heartbeat}. A replica that does not lead answers 421 with the leader's base URL in
 * the {@code Kairos-Leader} header.
 */
package io.kairos.protocol.agent;

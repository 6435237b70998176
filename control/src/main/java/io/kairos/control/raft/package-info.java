/**
 * The replicated log: Apache Ratis carries {@link io.kairos.control.state.ControlCommand}s, {@link
 * io.kairos.control.raft.KairosStateMachine} applies them to the {@code ControlState} and snapshots
 * it by atomic replacement, {@link io.kairos.control.raft.RaftReplica} runs one replica (server and
 * client) and {@link io.kairos.control.raft.SubmitBatcher} packs many submissions into one log
 * entry.
 */
package io.kairos.control.raft;

/**
 * The controller's replicated state: jobs with their whole life (request, attempts, exit codes),
 * nodes with their registration and drain state, tokens (hashed). {@link
 * io.kairos.control.state.ControlState} applies {@link io.kairos.control.state.ControlCommand}s
 * deterministically (time is a value in each command) and keeps the core's {@code ClusterStore} in
 * step, so the scheduler loop can run the core's pass on it. No I/O, no clock, no threads.
 *
 * <p>Its parts, each owning one thing: {@code Records} (the records and their indexes: what a
 * snapshot holds), {@code JobLifecycle} (a job's transitions), {@code NodeRegistry} (a node's),
 * {@code Suspects} (the evidence against nodes), {@code QueueGates} (dependencies, array limits and
 * unplaceable jobs: what keeps a pending job out of the store) and {@code CoreBridge} (the store,
 * and the mapping of records to core types). {@link io.kairos.control.state.CoreTime} is the one
 * conversion between the controller's milliseconds and the core's seconds.
 */
package io.kairos.control.state;

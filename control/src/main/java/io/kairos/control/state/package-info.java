/**
 * The controller's replicated state: jobs with their whole life (request, attempts, exit codes),
 * nodes with their registration and drain state, tokens (hashed). {@link
 * io.kairos.control.state.ControlState} applies {@link io.kairos.control.state.ControlCommand}s
 * deterministically (time is a value in each command) and keeps the core's {@code ClusterStore} in
 * step, so the scheduler loop can run the core's pass on it. No I/O, no clock, no threads.
 */
package io.kairos.control.state;

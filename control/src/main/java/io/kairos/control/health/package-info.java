/**
 * Failure detection from heartbeat arrival times: the phi-accrual detector ({@link
 * io.kairos.control.health.PhiAccrualDetector}) and a registry of one detector per node that
 * reports ALIVE, SUSPECT and DOWN transitions ({@link io.kairos.control.health.FailureDetectors}).
 * Pure and deterministic: time comes in as a value (epoch or monotonic milliseconds), nothing here
 * reads a clock, starts a thread, or writes the replicated state; the caller decides what a
 * transition does (log it, fence a lease, commit a command).
 */
package io.kairos.control.health;

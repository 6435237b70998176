/**
 * The trace simulator: a discrete-event loop on a virtual clock that drives the very same
 * scheduling pass as the controller. Single-threaded and deterministic: the same trace, cluster,
 * policy and flags give byte-identical results. Trace readers live in {@code sim.trace}, report
 * rendering in {@code sim.report}; the event loop itself does no I/O and reads no clock.
 */
package io.kairos.sim;

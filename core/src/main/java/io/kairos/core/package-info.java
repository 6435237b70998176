/**
 * The scheduling core: model, cluster state, the scheduling pass and the invariant checker.
 *
 * <p>Pure library: no threads, no I/O, no wall clock, no unseeded randomness. Time comes in as a
 * value (whole seconds, named {@code ...Sec}); the same input gives the same decisions. Both the
 * simulator and the controller drive this same code.
 */
package io.kairos.core;

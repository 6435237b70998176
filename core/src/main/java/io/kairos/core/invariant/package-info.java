/**
 * The DESIGN.md invariants as code. Tests run the checker after every step; the simulator runs it
 * inside every simulation with {@code --check-invariants}.
 */
package io.kairos.core.invariant;

/**
 * The scheduling pass: {@link io.kairos.core.sched.SchedulingPass} reads a snapshot and returns
 * decisions (starts and reservations) and a diagnosis. It mutates nothing outside its own ledger,
 * reads no clock and does no I/O. Sub-packages hold the stages: {@code order} (which job first),
 * {@code place} (where a gang fits, the per-pass ledger) and {@code backfill} (reservations on the
 * availability profile).
 */
package io.kairos.core.sched;

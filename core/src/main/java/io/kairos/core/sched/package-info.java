/**
 * The scheduling pass: {@link io.kairos.core.sched.SchedulingPass} reads a snapshot and returns
 * decisions (starts, reservations and preemptions) and a diagnosis. It mutates nothing outside its
 * own ledger, reads no clock and does no I/O. Sub-packages hold the stages: {@code order} (which
 * job first), {@code place} (where a gang fits, the per-pass ledger), {@code backfill}
 * (reservations on the availability profile) and {@code preempt} (victim search). The tenancy's
 * steps ({@link io.kairos.core.sched.TenancyStage}: quota admission, order tiers, victim selection)
 * live here, as they decide {@link io.kairos.core.sched.Decision}s and {@link
 * io.kairos.core.sched.Reason}s; the sub-packages never depend on this package.
 */
package io.kairos.core.sched;

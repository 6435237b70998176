/**
 * Where a gang fits. {@link io.kairos.core.sched.place.Ledger} is a pass's scratch pad over the
 * snapshot (free GPUs per node, per-domain sums, best-fit buckets, proposed starts and {@link
 * io.kairos.core.sched.place.Reservation reservations}); {@link
 * io.kairos.core.sched.place.GangPlacer} finds an all-or-nothing placement in the lowest topology
 * domain that holds the gang, best fit first. Nothing here depends on {@code backfill}, which
 * builds on it.
 */
package io.kairos.core.sched.place;

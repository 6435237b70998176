/**
 * Where a gang fits. {@link io.kairos.core.sched.place.Ledger} is a pass's scratch pad over the
 * snapshot (free GPUs per node, per-domain sums, best-fit buckets, proposed starts and
 * reservations); {@link io.kairos.core.sched.place.GangPlacer} finds an all-or-nothing placement in
 * the lowest topology domain that holds the gang, best fit first.
 */
package io.kairos.core.sched.place;

/**
 * Backfill: the availability profile. A blocked job that a policy chooses to protect gets a {@link
 * io.kairos.core.sched.place.Reservation} at its earliest start, computed by {@link
 * io.kairos.core.sched.backfill.AvailabilityProfile} from running jobs' time limits; later jobs
 * start now only if they do not delay it (the ledger of {@code place} keeps the reservations).
 */
package io.kairos.core.sched.backfill;

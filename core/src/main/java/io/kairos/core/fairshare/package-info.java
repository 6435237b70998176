/**
 * Multi-tenant fair share: an account hierarchy with shares ({@link
 * io.kairos.core.fairshare.AccountTree}), usage per account and resource decayed by a half-life
 * ({@link io.kairos.core.fairshare.UsageTracker}), and the fair-share factor computed from both
 * ({@link io.kairos.core.fairshare.FairShareFactor}, Slurm's classic formula or Fair Tree).
 *
 * <p>A library for the pass's ordering step, not wired into it yet. Like the rest of the core it
 * reads no clock (time is a {@code long} of seconds passed in), does no I/O and uses no randomness;
 * the same calls in the same order give the same doubles, bit for bit (all transcendental functions
 * go through {@link java.lang.StrictMath}). Nothing here depends on the cluster state or the pass:
 * accounts are names, resources are three numbers.
 */
package io.kairos.core.fairshare;

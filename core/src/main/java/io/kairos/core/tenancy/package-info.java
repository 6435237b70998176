/**
 * Multi-tenant quotas: queues with a nominal quota per resource flavor, grouped in cohorts that
 * lend each other unused quota within borrowing and lending limits (the semantics of Kueue's
 * ClusterQueue and cohort). {@link io.kairos.core.tenancy.TenancyConfig} is the validated
 * configuration; {@link io.kairos.core.tenancy.QuotaLedger} keeps admitted usage and answers "does
 * this request fit, and how much would it borrow".
 *
 * <p>Pure library, JDK only: no clock, no I/O, no threads. The ledger does not know jobs, nodes or
 * the scheduling pass; the pass turns a job into a request (resource to amount) and asks it.
 *
 * <p>{@link io.kairos.core.tenancy.Tenants} is what a pass knows of tenancy, and {@link
 * io.kairos.core.tenancy.PreemptionBook} the one set of rules by which every driver (controller,
 * simulator) keeps the preemptions it made from one pass to the next (time passed in, in seconds).
 */
package io.kairos.core.tenancy;

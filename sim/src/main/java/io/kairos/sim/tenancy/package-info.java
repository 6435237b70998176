/**
 * Reads the multi-tenancy configuration (queues, cohorts, quotas, priority classes, fair-share
 * accounts) from YAML into the core's {@link io.kairos.core.tenancy.TenancyConfig} and {@link
 * io.kairos.core.fairshare.AccountTree}. See docs/tenancy.md.
 */
package io.kairos.sim.tenancy;

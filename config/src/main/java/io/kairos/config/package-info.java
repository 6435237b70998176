/**
 * Configuration files, read and checked at the edge into the core's values: the tenancy file
 * (queues, cohorts, quotas, priority classes, fair-share accounts; see docs/tenancy.md) into a
 * {@link io.kairos.config.Tenancy} of {@link io.kairos.core.tenancy.TenancyConfig} and {@link
 * io.kairos.core.fairshare.AccountTree}, for the simulator and the controller alike; and the
 * helpers every configuration document shares: the strict YAML reader ({@link
 * io.kairos.config.StrictYaml}), problems with key paths, and "did you mean" ({@link
 * io.kairos.config.DidYouMean}). Nothing here schedules; only the methods that take a file's {@code
 * Path} do I/O.
 */
package io.kairos.config;

/**
 * Test support for the scheduling core, shared by every module's tests (test scope): the {@link
 * io.kairos.testkit.SchedulerHarness} that runs passes and commits them on a manual clock, job and
 * cluster builders ({@link io.kairos.testkit.Jobs}, {@link io.kairos.testkit.Clusters}), seeded
 * generators ({@link io.kairos.testkit.Generators}) whose every case replays from its seed, and the
 * property and scenario runners. Nothing here is on any production classpath.
 */
package io.kairos.testkit;

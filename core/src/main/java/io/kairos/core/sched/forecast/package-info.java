/**
 * Start forecasts over GPU counts: {@link io.kairos.core.sched.forecast.GpuTimeline}, free GPUs
 * over time with conservative backfilling on it. Knows nothing of the pass; {@code
 * io.kairos.core.sched.StartForecast} feeds it the pass's order and the expected run times.
 */
package io.kairos.core.sched.forecast;

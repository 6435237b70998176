package io.kairos.protocol;

/**
 * One point of the utilization history: the averages of the samples taken in its interval, and the
 * jobs that started and ended in it.
 *
 * @param at ISO-8601 instant at which the interval starts
 * @param gpusTotal GPUs on registered nodes that are UP (average)
 * @param gpusBusy GPUs held by running jobs (average)
 * @param pending jobs waiting (average queue depth)
 * @param running jobs running (average)
 * @param started job starts (requeued restarts included) in the interval
 * @param finished jobs that reached a final state in the interval
 */
public record UtilizationPoint(
    String at,
    double gpusTotal,
    double gpusBusy,
    double pending,
    double running,
    long started,
    long finished) {}

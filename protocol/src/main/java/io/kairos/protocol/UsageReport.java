package io.kairos.protocol;

import java.util.List;
import java.util.Map;

/**
 * Usage over a period, grouped ({@code GET /api/v1/report}), like Slurm's sreport: each attempt's
 * use is counted for the part of it that falls inside the period.
 *
 * @param by what the rows are: account, user or queue
 * @param from the period's start (ISO-8601, UTC)
 * @param to the period's end (exclusive)
 * @param rows one per account (or user, or queue) that used something, most GPU-seconds first
 * @param total the sum of the rows
 */
public record UsageReport(String by, String from, String to, List<UsageRow> rows, UsageRow total) {

  /**
   * One group's use.
   *
   * @param key the account, user or queue ("" for jobs without an account)
   * @param jobs how many jobs had an attempt in the period
   * @param gpuSeconds GPU-seconds in the period
   * @param gpuSecondsByModel the same by GPU model
   * @param cpuSeconds CPU-seconds in the period
   * @param memoryMbSeconds memory (MiB) times seconds in the period
   */
  public record UsageRow(
      String key,
      long jobs,
      double gpuSeconds,
      Map<String, Double> gpuSecondsByModel,
      double cpuSeconds,
      double memoryMbSeconds) {}
}

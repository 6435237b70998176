package io.kairos.protocol;

import java.util.List;

/**
 * The cluster's load over a recent window ({@code GET /api/v1/stats/utilization}), oldest point
 * first. Kept by the leader in memory: a new leader starts an empty history.
 *
 * @param window the window asked for, as given ({@code 6h}, {@code 2d})
 * @param resolutionSec the seconds each point covers (10 for recent hours, coarser further back)
 */
public record UtilizationView(String window, long resolutionSec, List<UtilizationPoint> points) {
  public UtilizationView {
    points = List.copyOf(points);
  }
}

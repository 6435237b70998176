package io.kairos.agent.gpu;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The outcome of one health check: healthy, or the problems found, node-wide ones first and then by
 * GPU index (stable otherwise, so the order of checks shows). Immutable.
 */
public record HealthReport(List<HealthProblem> problems) {
  public static final HealthReport HEALTHY = new HealthReport(List.of());

  public HealthReport {
    problems = problems.stream().sorted(Comparator.comparingInt(HealthProblem::gpuIndex)).toList();
  }

  public boolean isHealthy() {
    return problems.isEmpty();
  }

  /** {@code "healthy"}, or the reasons joined with {@code "; "}. */
  public String summary() {
    return isHealthy()
        ? "healthy"
        : problems.stream().map(HealthProblem::reason).collect(Collectors.joining("; "));
  }

  /** This report's problems followed by {@code other}'s. */
  public HealthReport and(HealthReport other) {
    List<HealthProblem> all = new ArrayList<>(problems);
    all.addAll(other.problems);
    return new HealthReport(all);
  }
}

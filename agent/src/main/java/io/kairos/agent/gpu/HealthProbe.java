package io.kairos.agent.gpu;

import java.util.List;
import java.util.Objects;

/**
 * One periodic health check of a node: a fresh {@link Discovery} judged by the {@link
 * HealthChecker} against the registration baseline, plus the site's {@link HealthCheckProgram}s.
 *
 * <p>The only impure part of health checking: it runs the processes and hands their results, as
 * values, to the pure checker. Blocking; call it from a virtual thread or a scheduled task, not
 * from a heartbeat loop that must not stall. Thread-safe.
 */
public final class HealthProbe {
  private final Discovery discovery;
  private final HealthChecker checker;
  private final List<HealthCheckProgram> programs;

  public HealthProbe(
      Discovery discovery, HealthChecker checker, List<HealthCheckProgram> programs) {
    this.discovery = Objects.requireNonNull(discovery, "discovery");
    this.checker = Objects.requireNonNull(checker, "checker");
    this.programs = List.copyOf(programs);
  }

  /** Runs nvidia-smi and every check program, and reports everything found. */
  public HealthReport check(GpuInventory baseline) {
    HealthReport report = checker.check(baseline, discovery.run());
    for (HealthCheckProgram program : programs) {
      report = report.and(program.run());
    }
    return report;
  }
}

package io.kairos.agent.gpu;

import io.kairos.agent.gpu.HealthProblem.Kind;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A site's own node check, in the manner of Slurm's {@code HealthCheckProgram} or LBNL's NHC: a
 * program run with a timeout whose exit status is the verdict.
 *
 * <p>Exit 0 is healthy. A non-zero exit is unhealthy, with the first line of stdout (or of stderr
 * when stdout is empty) as the reason. Running past the timeout is unhealthy and the program's tree
 * is killed. {@link #judge} is pure; {@link #run} starts the process. Immutable.
 *
 * @param argv the program and its arguments; no shell
 * @param extraEnv variables added to the agent's environment
 * @param timeout the most one run may take
 */
public record HealthCheckProgram(
    List<String> argv, Map<String, String> extraEnv, Duration timeout) {
  public HealthCheckProgram {
    argv = List.copyOf(argv);
    if (argv.isEmpty() || argv.getFirst().isBlank()) {
      throw new IllegalArgumentException("healthCheck.program must not be empty");
    }
    extraEnv = Map.copyOf(extraEnv);
    Objects.requireNonNull(timeout, "healthCheck.timeout");
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("healthCheck.timeout must be > 0, got " + timeout);
    }
  }

  /** Runs the program and judges it; a program that cannot start is a problem, not an error. */
  public HealthReport run() {
    try {
      return judge(CommandRunner.run(argv, extraEnv, timeout));
    } catch (IOException e) {
      return problem("health check " + e.getMessage());
    }
  }

  /** The verdict on one run. */
  public HealthReport judge(CommandResult result) {
    String program = CommandResult.display(List.of(argv.getFirst()));
    if (result.timedOut()) {
      return problem("health check " + program + " timed out after " + timeout.toMillis() + " ms");
    }
    if (result.exitCode() == 0) {
      return HealthReport.HEALTHY;
    }
    String line = result.firstOutputLine();
    return problem(
        "health check "
            + program
            + " failed (exit "
            + result.exitCode()
            + ")"
            + (line.isEmpty() ? "" : ": " + line));
  }

  private static HealthReport problem(String reason) {
    List<HealthProblem> problems = new ArrayList<>();
    problems.add(new HealthProblem(HealthProblem.NODE, Kind.CHECK_PROGRAM, reason.strip()));
    return new HealthReport(problems);
  }
}

package io.kairos.agent;

import io.kairos.agent.gpu.HealthProblem;
import io.kairos.agent.gpu.HealthProblem.Kind;
import io.kairos.agent.gpu.HealthReport;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Faults of emulated GPUs, for tests: a file with one {@code INDEX [REASON]} line per unhealthy GPU
 * ({@code 2 XID 48: double-bit ECC error}); blank lines and {@code #} comments are skipped. An
 * absent file means every GPU is healthy. A line that is not {@code INDEX [REASON]}, or names no
 * GPU of the node, is a problem of the node as a whole, so a mistake is loud rather than ignored.
 *
 * @param file read at every health check
 * @param gpuCount the node's emulated GPUs: indexes 0 to gpuCount - 1
 */
record EmulatedFaults(Path file, int gpuCount) {
  HealthReport read() {
    List<String> lines;
    try {
      lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    } catch (NoSuchFileException e) {
      return HealthReport.HEALTHY;
    } catch (IOException e) {
      return nodeProblem("cannot read emulated GPU faults file " + file + ": " + e.getMessage());
    }
    var problems = new ArrayList<HealthProblem>();
    for (int n = 0; n < lines.size(); n++) {
      String line = lines.get(n).strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      String[] parts = line.split("\\s+", 2);
      int gpu;
      try {
        gpu = Integer.parseInt(parts[0]);
      } catch (NumberFormatException e) {
        gpu = -1;
      }
      if (gpu < 0 || gpu >= gpuCount) {
        problems.add(
            new HealthProblem(
                HealthProblem.NODE,
                Kind.CHECK_PROGRAM,
                "emulated GPU faults file "
                    + file
                    + " line "
                    + (n + 1)
                    + ": expected 'INDEX [REASON]' with INDEX 0 to "
                    + (gpuCount - 1)));
        continue;
      }
      String reason = parts.length > 1 ? parts[1] : "emulated fault";
      problems.add(new HealthProblem(gpu, Kind.ECC_ERRORS, "GPU " + gpu + ": " + reason));
    }
    return new HealthReport(problems);
  }

  private static HealthReport nodeProblem(String reason) {
    return new HealthReport(
        List.of(new HealthProblem(HealthProblem.NODE, Kind.CHECK_PROGRAM, reason)));
  }
}

package io.kairos.sim.trace;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;

/**
 * Finds the shared trace files ({@code ../shared/traces} beside the repository) for tests that read
 * real data.
 */
public final class TestTraces {
  private TestTraces() {}

  /** The trace directory: {@code -Dkairos.traces}, else searched for near the working dir. */
  public static Path dir() {
    var tried = new ArrayList<Path>();
    var property = System.getProperty("kairos.traces");
    if (property != null && !property.isBlank()) {
      tried.add(Path.of(property));
    }
    var cwd = Path.of(System.getProperty("user.dir"));
    tried.add(cwd.resolve("../../shared/traces"));
    tried.add(cwd.resolve("../shared/traces"));
    for (var candidate : tried) {
      if (Files.isDirectory(candidate.resolve("swf"))) {
        return candidate.normalize();
      }
    }
    throw new IllegalStateException(
        "trace directory not found; tried "
            + tried
            + " (set -Dkairos.traces=/path/to/shared/traces)");
  }

  /** A file under the trace directory, which must exist. */
  public static Path file(String relative) {
    var path = dir().resolve(relative);
    if (!Files.isRegularFile(path)) {
      throw new IllegalStateException("trace file missing: " + path);
    }
    return path;
  }
}

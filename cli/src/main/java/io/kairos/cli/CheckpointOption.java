package io.kairos.cli;

import io.kairos.protocol.CheckpointSpec;
import java.util.Set;

/**
 * {@code kairos submit --checkpoint [signal=USR1,timeout=2m,every=30m,keep=3]}: the job's
 * checkpoint declaration; each key optional (the controller applies its defaults and checks the
 * values), {@code --checkpoint} alone declares it with all defaults.
 */
final class CheckpointOption {
  static final Set<String> KEYS = Set.of("signal", "timeout", "every", "keep");

  private CheckpointOption() {}

  static CheckpointSpec parse(String text) {
    String signal = null;
    String timeout = null;
    String every = null;
    Integer keep = null;
    for (String part : text.split(",")) {
      if (part.isBlank()) {
        continue;
      }
      int eq = part.indexOf('=');
      String key = eq < 0 ? part.trim() : part.substring(0, eq).trim();
      String value = eq < 0 ? "" : part.substring(eq + 1).trim();
      if (!KEYS.contains(key) || value.isEmpty()) {
        throw new UsageException(
            "--checkpoint: '"
                + part
                + "' is not KEY=VALUE with a key of signal, timeout, every or keep"
                + " (e.g. --checkpoint signal=USR1,timeout=2m,every=30m,keep=3)");
      }
      switch (key) {
        case "signal" -> signal = value;
        case "timeout" -> timeout = value;
        case "every" -> every = value;
        default -> {
          try {
            keep = Integer.valueOf(value);
          } catch (NumberFormatException e) {
            throw new UsageException("--checkpoint: keep must be a number, got '" + value + "'");
          }
        }
      }
    }
    return new CheckpointSpec(signal, timeout, every, keep);
  }
}

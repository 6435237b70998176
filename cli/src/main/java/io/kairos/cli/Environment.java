package io.kairos.cli;

import java.io.InputStream;
import java.nio.file.Path;
import java.time.InstantSource;
import java.time.ZoneId;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * What the client commands read from the machine they run on: environment variables, standard
 * input, the clock, the time zone and the working directory. Commands read these here, never from
 * {@code System} directly, so that tests can fix them; only tests assign the fields (and {@link
 * #reset} them).
 */
final class Environment {
  private Environment() {}

  static volatile Function<String, String> variables = System::getenv;

  /** Every variable, for a job that exports the submitting shell's environment (sbatch's ALL). */
  static volatile Supplier<Map<String, String>> allVariables = System::getenv;

  /** Standard input, for a script read from it ({@code sbatch < job.sh}). */
  static volatile Supplier<InputStream> stdin = () -> System.in;

  static volatile InstantSource clock = InstantSource.system();
  static volatile ZoneId zone = ZoneId.systemDefault();
  static volatile Path workingDirectory = Path.of("").toAbsolutePath();
  static volatile Path home = Path.of(System.getProperty("user.home"));

  /** The variable's value, or null when it is unset or blank. */
  static String variable(String name) {
    String value = variables.apply(name);
    return value == null || value.isBlank() ? null : value.strip();
  }

  /** Back to the real machine (tests call this after changing a field). */
  static void reset() {
    variables = System::getenv;
    allVariables = System::getenv;
    stdin = () -> System.in;
    clock = InstantSource.system();
    zone = ZoneId.systemDefault();
    workingDirectory = Path.of("").toAbsolutePath();
    home = Path.of(System.getProperty("user.home"));
  }
}

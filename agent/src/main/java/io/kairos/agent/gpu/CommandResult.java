package io.kairos.agent.gpu;

import java.util.List;
import java.util.Objects;

/**
 * What one run of an external program produced: its command line, exit code, captured output and
 * whether it was killed for running past its timeout.
 *
 * @param command the argv that ran (program first)
 * @param exitCode the exit status; meaningless when {@code timedOut}
 * @param stdout everything the program wrote to stdout (UTF-8)
 * @param stderr everything the program wrote to stderr (UTF-8)
 * @param timedOut whether the runner killed the program at its timeout
 */
public record CommandResult(
    List<String> command, int exitCode, String stdout, String stderr, boolean timedOut) {
  public CommandResult {
    command = List.copyOf(command);
    Objects.requireNonNull(stdout, "stdout");
    Objects.requireNonNull(stderr, "stderr");
  }

  /** Exited 0 within its timeout. */
  public boolean isSuccess() {
    return !timedOut && exitCode == 0;
  }

  /** The first non-blank line of stderr, or of stdout when stderr is empty; "" when both are. */
  public String firstErrorLine() {
    String line = firstLine(stderr);
    return line.isEmpty() ? firstLine(stdout) : line;
  }

  /** The first non-blank line of stdout, or of stderr when stdout is empty; "" when both are. */
  public String firstOutputLine() {
    String line = firstLine(stdout);
    return line.isEmpty() ? firstLine(stderr) : line;
  }

  /**
   * A one-line account of a failed run for error messages, e.g. {@code "nvidia-smi -q -x exited 9:
   * NVIDIA-SMI has failed ..."}. The program is shown by its file name.
   */
  public String describeFailure() {
    String what = display(command);
    if (timedOut) {
      return what + " timed out";
    }
    String line = firstErrorLine();
    return what + " exited " + exitCode + (line.isEmpty() ? "" : ": " + line);
  }

  /** The command with the program shown by file name: {@code "nvidia-smi topo -m"}. */
  static String display(List<String> command) {
    if (command.isEmpty()) {
      return "";
    }
    String program = command.getFirst();
    int slash = program.lastIndexOf('/');
    var parts = new java.util.ArrayList<String>(command);
    parts.set(0, slash >= 0 ? program.substring(slash + 1) : program);
    return String.join(" ", parts);
  }

  static String firstLine(String text) {
    for (String line : text.split("\\R")) {
      if (!line.isBlank()) {
        return line.strip();
      }
    }
    return "";
  }
}

package io.kairos.protocol;

import java.util.List;

/**
 * The signals a job may choose for a stop ({@code killSignal}) or a warning ({@code warnSignal}),
 * by name without "SIG". The controller validates submissions against this list, and the agent
 * refuses an assignment that names any other.
 */
public final class JobSignals {
  public static final List<String> NAMES = List.of("TERM", "INT", "HUP", "QUIT", "USR1", "USR2");

  private JobSignals() {}
}

package io.kairos.control.api;

import io.kairos.control.state.CheckpointPolicy;
import io.kairos.protocol.CheckpointSpec;

/**
 * Validates a submission's {@code checkpoint} declaration ({@link CheckpointSpec}) and applies its
 * defaults; a bad field is a 400 that names it ({@code checkpoint.timeout}) and the fix.
 */
final class CheckpointSubmissions {
  static final long MAX_TIMEOUT_SEC = 3600;
  static final long MAX_EVERY_SEC = 7 * 86_400;

  private CheckpointSubmissions() {}

  /** The policy the log records; null when the job declares none. */
  static CheckpointPolicy policy(CheckpointSpec spec, String prefix) {
    if (spec == null) {
      return null;
    }
    String field = prefix + "checkpoint.";
    String signal =
        spec.signal() == null
            ? CheckpointPolicy.DEFAULT_SIGNAL
            : Submissions.signal(spec.signal(), field + "signal");
    long timeout =
        spec.timeout() == null
            ? CheckpointPolicy.DEFAULT_TIMEOUT_SEC
            : Submissions.duration(spec.timeout(), field + "timeout");
    Submissions.check(
        timeout >= 1 && timeout <= MAX_TIMEOUT_SEC,
        field + "timeout",
        "checkpoint.timeout must be between 1 second and 1 hour, got " + timeout + "s",
        "give the time the job needs to write a checkpoint when asked, e.g. \"2m\"");
    long every = CheckpointPolicy.DEFAULT_EVERY_SEC;
    if (spec.every() != null) {
      String e = spec.every().trim();
      every = e.equals("0") || e.equals("0s") ? 0 : Submissions.duration(e, field + "every");
    }
    Submissions.check(
        every >= 0 && every <= MAX_EVERY_SEC,
        field + "every",
        "checkpoint.every must be 0 (only when asked) or up to 7 days, got " + every + "s",
        "give how often the job checkpoints on its own, e.g. \"30m\"");
    int keep = spec.keep() == null ? CheckpointPolicy.DEFAULT_KEEP : spec.keep();
    Submissions.check(
        keep >= 1 && keep <= CheckpointPolicy.MAX_KEEP,
        field + "keep",
        "checkpoint.keep must be between 1 and " + CheckpointPolicy.MAX_KEEP + ", got " + keep,
        "give how many complete checkpoints to keep, e.g. 3");
    return new CheckpointPolicy(signal, timeout, every, keep);
  }
}

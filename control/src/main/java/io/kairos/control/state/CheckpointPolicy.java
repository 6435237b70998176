package io.kairos.control.state;

/**
 * A job's checkpoint declaration, validated and with its defaults (what the log records).
 *
 * @param signal the signal that asks the job for a checkpoint: TERM, INT, HUP, QUIT, USR1 or USR2
 * @param timeoutSec how long a preemption waits for the checkpoint it asks for, then stops the job
 * @param everySec how often the job should checkpoint on its own; 0 = only when asked
 * @param keep how many complete checkpoints Kairos keeps
 */
public record CheckpointPolicy(String signal, long timeoutSec, long everySec, int keep) {
  public static final String DEFAULT_SIGNAL = "USR1";
  public static final long DEFAULT_TIMEOUT_SEC = 120;
  public static final long DEFAULT_EVERY_SEC = 1800;
  public static final int DEFAULT_KEEP = 3;
  public static final int MAX_KEEP = 100;

  public CheckpointPolicy {
    java.util.Objects.requireNonNull(signal, "checkpoint.signal");
    if (timeoutSec < 1 || everySec < 0 || keep < 1 || keep > MAX_KEEP) {
      throw new IllegalArgumentException("invalid checkpoint policy");
    }
  }
}

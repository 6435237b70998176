package io.kairos.protocol;

/** A job's life: PENDING, then RUNNING, then one of the three final states. */
public enum JobState {
  PENDING,
  RUNNING,
  SUCCEEDED,
  FAILED,
  CANCELLED;

  public boolean isFinal() {
    return this == SUCCEEDED || this == FAILED || this == CANCELLED;
  }
}

package io.kairos.core.command;

/** What applying one command did: accepted, or refused with a reason (not an exception). */
public sealed interface Applied {
  Applied ACCEPTED = new Accepted();

  record Accepted() implements Applied {}

  /**
   * The command's preconditions no longer hold (GPUs taken since the snapshot, job already gone):
   * the state is unchanged, and the scheduler replans.
   */
  record Refused(String reason) implements Applied {}

  default boolean isAccepted() {
    return this instanceof Accepted;
  }
}

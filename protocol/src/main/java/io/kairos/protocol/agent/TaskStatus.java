package io.kairos.protocol.agent;

/** A task's state on its agent. */
public enum TaskStatus {
  /** Received, process starting. */
  STARTING,
  RUNNING,
  /** The process ended (exit code, or killed: see the reason). */
  EXITED
}

package io.kairos.protocol.agent;

/** A task's state on its agent. */
public enum TaskStatus {
  /** Received, process starting. */
  STARTING,
  /**
   * Prepared (directories, limits, health check) and waiting at the gang's barrier: the process
   * starts when the controller says go.
   */
  READY,
  RUNNING,
  /** The process ended (exit code, or killed: see the reason). */
  EXITED
}

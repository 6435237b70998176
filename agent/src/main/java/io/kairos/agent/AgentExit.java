package io.kairos.agent;

/**
 * How an agent stopped, as {@link Agent#awaitStop} returns it.
 *
 * @param isFailure true when the agent stopped on its own because it cannot go on (the controller
 *     refused its join token); false when it was closed
 * @param message what happened, for the operator
 */
public record AgentExit(boolean isFailure, String message) {
  static AgentExit closed() {
    return new AgentExit(false, "closed");
  }

  static AgentExit failed(String message) {
    return new AgentExit(true, message);
  }
}

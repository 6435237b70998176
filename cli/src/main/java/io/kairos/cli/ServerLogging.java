package io.kairos.cli;

import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.Logger;

/**
 * Quiets java.util.logging (gRPC inside Ratis logs through it) for the long-running commands; SLF4J
 * output goes through logback with the levels in {@code logback.xml}.
 */
final class ServerLogging {
  private ServerLogging() {}

  static void configure() {
    LogManager.getLogManager().reset();
    Logger root = Logger.getLogger("");
    root.setLevel(Level.WARNING);
    var handler = new java.util.logging.ConsoleHandler();
    handler.setLevel(Level.WARNING);
    root.addHandler(handler);
  }
}

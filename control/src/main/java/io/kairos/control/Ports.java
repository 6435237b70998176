package io.kairos.control;

import java.io.IOException;
import java.net.ServerSocket;

/** The ports a controller binds: checked free before Ratis binds, or picked free. */
final class Ports {
  private Ports() {}

  /**
   * Fails with a message naming the port when something already listens there (often another
   * Kairos): Ratis would otherwise stop the JVM with its own exit on a failed bind.
   */
  static void ensureFree(String host, int port, String what) {
    try (var socket = new ServerSocket()) {
      socket.setReuseAddress(true);
      socket.bind(new java.net.InetSocketAddress(host, port));
    } catch (IOException e) {
      throw new IllegalArgumentException(
          "port "
              + port
              + " on "
              + host
              + " for "
              + what
              + " is in use (another Kairos running?);"
              + " stop it, or choose another port with --listen HOST:PORT");
    }
  }

  static int freePort() throws IOException {
    try (var socket = new ServerSocket(0)) {
      socket.setReuseAddress(true);
      return socket.getLocalPort();
    }
  }
}

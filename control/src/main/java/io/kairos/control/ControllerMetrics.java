package io.kairos.control;

import io.kairos.control.raft.RaftReplica;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.ServerSocket;

/** The controller's gauges, and the port checks it makes before it binds. */
final class ControllerMetrics {
  private ControllerMetrics() {}

  static void registerGauges(RaftReplica replica, PrometheusMeterRegistry meters) {
    new JvmMemoryMetrics().bindTo(meters);
    new JvmThreadMetrics().bindTo(meters);
    var sm = replica.stateMachine();
    Gauge.builder(
            "kairos.jobs.pending",
            sm,
            m -> m.read(s -> countJobs(s, io.kairos.protocol.JobState.PENDING)))
        .description("jobs waiting (queue depth)")
        .register(meters);
    Gauge.builder(
            "kairos.jobs.running",
            sm,
            m -> m.read(s -> countJobs(s, io.kairos.protocol.JobState.RUNNING)))
        .description("jobs running")
        .register(meters);
    Gauge.builder("kairos.nodes", sm, m -> m.read(s -> (double) s.nodes().size()))
        .description("registered nodes")
        .register(meters);
    Gauge.builder("kairos.raft.applied.index", replica, r -> (double) r.appliedIndex())
        .description("the last log index applied on this replica (commits)")
        .register(meters);
    Gauge.builder("kairos.raft.leader", replica, r -> r.isLeader() ? 1 : 0)
        .description("1 on the leader")
        .register(meters);
  }

  private static double countJobs(
      io.kairos.control.state.ControlState s, io.kairos.protocol.JobState state) {
    long n = 0;
    for (var j : s.activeJobs()) {
      if (j.state == state) {
        n++;
      }
    }
    return n;
  }

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

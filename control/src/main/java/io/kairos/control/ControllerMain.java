package io.kairos.control;

import io.kairos.control.auth.RunAsPolicy;
import io.kairos.control.raft.PeerAddress;
import io.kairos.core.sched.Policy;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;

/**
 * A bare entry point for one replica, for tests that run the controller as a process: {@code --data
 * DIR --listen HOST:PORT [--peers H:P,H:P,H:P] [--policy NAME] [--admin-runs-as ACCOUNT]
 * [--allow-root-jobs] [--tls | --insecure] [--raft-listen HOST:PORT] [--ca-from DIR] [--accounting
 * URL] [--accounting-password-file FILE] [--retain-finished-ms MS] [--retain-finished-count N]}.
 * Users run {@code kairos server}, which takes the same options. Prints {@code
 * kairos-controller-ready URL} on stdout once serving.
 */
public final class ControllerMain {
  private ControllerMain() {}

  public static void main(String[] args) throws Exception {
    Path data = null;
    String listen = "127.0.0.1:8080";
    String peers = "";
    String policy = "kairos";
    String adminRunsAs = null;
    boolean allowRootJobs = false;
    boolean join = false;
    var security = NetworkSecurity.DEFAULT;
    String accounting = null;
    Optional<String> accountingPassword = Optional.empty();
    long retainMs = io.kairos.control.accounting.AccountingSettings.DEFAULT_RETAIN.toMillis();
    long retainCount = io.kairos.control.accounting.AccountingSettings.DEFAULT_RETAIN_COUNT;
    for (int i = 0; i < args.length; i++) {
      String value = i + 1 < args.length ? args[i + 1] : "";
      if (args[i].equals("--allow-root-jobs")) {
        allowRootJobs = true;
        continue;
      }
      if (args[i].equals("--join")) {
        join = true;
        continue;
      }
      switch (args[i]) {
        case "--admin-runs-as" -> adminRunsAs = value;
        case "--data" -> data = Path.of(value);
        case "--listen" -> listen = value;
        case "--peers" -> peers = value;
        case "--policy" -> policy = value;
        case "--accounting" -> accounting = value;
        case "--accounting-password-file" ->
            accountingPassword =
                Optional.of(java.nio.file.Files.readString(Path.of(value)).strip());
        case "--retain-finished-ms" -> retainMs = Long.parseLong(value);
        case "--retain-finished-count" -> retainCount = Long.parseLong(value);
        case "--raft-listen" ->
            security =
                new NetworkSecurity(
                    security.mode(),
                    Optional.of(value),
                    security.extraHosts(),
                    security.caFrom(),
                    security.rotateCerts());
        case "--ca-from" ->
            security =
                new NetworkSecurity(
                    security.mode(),
                    security.raftListen(),
                    security.extraHosts(),
                    Optional.of(Path.of(value)),
                    security.rotateCerts());
        case "--tls" -> {
          security = security.withMode(NetworkSecurity.Mode.TLS);
          continue;
        }
        case "--insecure" -> {
          security = security.withMode(NetworkSecurity.Mode.INSECURE);
          continue;
        }
        default -> {
          System.err.println("unknown option " + args[i]);
          System.exit(2);
        }
      }
      i++;
    }
    if (data == null) {
      System.err.println("--data is required");
      System.exit(2);
    }
    var controller =
        Controller.start(
            config(data, listen, peers, policy, Optional.empty())
                .withRunAs(RunAsPolicy.of(adminRunsAs, allowRootJobs))
                .withSecurity(security)
                .withJoin(join),
            io.kairos.control.accounting.AccountingSettings.parse(
                    accounting, accountingPassword, Optional.empty())
                .withRetention(java.time.Duration.ofMillis(retainMs), retainCount));
    System.out.println("kairos-controller-ready " + controller.url());
    System.out.flush();
    var stop = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  try {
                    controller.close();
                  } catch (Exception e) {
                    // exiting anyway
                  }
                  stop.countDown();
                }));
    stop.await();
  }

  /** The config for {@code --listen} and {@code --peers} (empty for a single replica). */
  public static ControllerConfig config(
      Path data, String listen, String peers, String policyName, Optional<Controller.Tls> tls) {
    PeerAddress self = parseListen(listen);
    List<PeerAddress> group = PeerAddress.parseList(peers);
    if (!group.isEmpty()) {
      PeerAddress match =
          group.stream()
              .filter(p -> p.host().equals(self.host()) && p.httpPort() == self.httpPort())
              .findFirst()
              .orElseThrow(
                  () ->
                      new IllegalArgumentException(
                          "--listen " + listen + " must be one of --peers " + peers));
      if (group.size() != 3 && group.size() != 5) {
        throw new IllegalArgumentException(
            "--peers lists "
                + group.size()
                + " replicas; a group has 3 or 5 (leave --peers out for a single replica)");
      }
      return new ControllerConfig(data, match, group, policy(policyName), tls);
    }
    return new ControllerConfig(data, self, List.of(), policy(policyName), tls);
  }

  static PeerAddress parseListen(String listen) {
    int colon = listen.lastIndexOf(':');
    if (colon <= 0) {
      throw new IllegalArgumentException(
          "--listen " + listen + " must be HOST:PORT, e.g. 127.0.0.1:8080");
    }
    int port;
    try {
      port = Integer.parseInt(listen.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--listen " + listen + ": the port is not a number");
    }
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("--listen " + listen + ": the port must be 0-65535");
    }
    String host = listen.substring(0, colon);
    return new PeerAddress(host, port, port == 0 ? 0 : port + PeerAddress.RAFT_PORT_OFFSET);
  }

  static Policy policy(String name) {
    return Policy.byName(name)
        .orElseThrow(
            () ->
                new IllegalArgumentException(
                    "--policy " + name + " is unknown; choose one of " + Policy.names()));
  }
}

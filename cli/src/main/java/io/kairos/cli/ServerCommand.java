package io.kairos.cli;

import io.kairos.config.SlurmNames;
import io.kairos.config.SlurmNamesYaml;
import io.kairos.config.TenancyYaml;
import io.kairos.control.Controller;
import io.kairos.control.ControllerMain;
import io.kairos.control.NetworkSecurity;
import io.kairos.control.agent.LeaseSettings;
import io.kairos.control.auth.PrivateData;
import io.kairos.control.auth.RunAsPolicy;
import io.kairos.control.health.PhiAccrualDetector;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code kairos server}: one controller replica, until stopped. */
@Command(
    name = "server",
    mixinStandardHelpOptions = true,
    description = {
      "Runs one controller replica: the replicated state (Apache Ratis log under --data),"
          + " the REST API and the scheduler (on the leader).",
      "",
      "Alone it is a complete controller. With --peers it joins a group of 3 or 5 replicas;"
          + " any replica accepts requests and forwards writes to the leader.",
      "The first start writes DATA/admin.token and DATA/join.token (mode 0600), and the cluster"
          + " CA: DATA/ca.pem and DATA/ca.key (0600); each start issues the replica its"
          + " certificate from it (DATA/tls/). Off loopback the API serves HTTPS with it and the"
          + " Raft transport speaks mutual TLS; it prints the join command with the CA's hash."
    })
final class ServerCommand implements Callable<Integer> {
  @Option(
      names = "--data",
      paramLabel = "DIR",
      description = "Data directory (default: $KAIROS_DATA or ~/.kairos).")
  Path data;

  @Option(
      names = "--listen",
      paramLabel = "HOST:PORT",
      defaultValue = "127.0.0.1:8080",
      description =
          "Where the HTTP API listens (default: ${DEFAULT-VALUE}). The Raft transport"
              + " listens on the same host, port PORT+1000.")
  String listen;

  @Option(
      names = "--raft-listen",
      paramLabel = "HOST:PORT",
      description =
          "Where the Raft transport binds instead (default: the --listen host, PORT+1000; in a"
              + " group the port is the one --peers gives this replica).")
  String raftListen;

  @Option(
      names = "--tls",
      description =
          "Serve HTTPS even on loopback (off loopback it is the default). Raft always speaks"
              + " mutual TLS unless --insecure.")
  boolean forceTls;

  @Option(
      names = "--insecure",
      description =
          "Plain text: HTTP for the API and no TLS on Raft, even off loopback (loudly warned"
              + " about). For a trusted, isolated network or a benchmark only.")
  boolean insecure;

  @Option(
      names = "--tls-san",
      paramLabel = "NAME",
      split = ",",
      description =
          "Another host name or address the replica certificate must carry (a DNS name or"
              + " load balancer agents use); repeatable.")
  List<String> sans = new ArrayList<>();

  @Option(
      names = "--ca-from",
      paramLabel = "DIR",
      description =
          "Copy the cluster CA (ca.pem, ca.key) from DIR into the data directory on first start:"
              + " every replica of a group needs the same one (`kairos tls create-ca --out DIR`).")
  Path caFrom;

  @Option(
      names = "--rotate-certs",
      description =
          "Issue this replica a new certificate from the CA now (it is re-issued by itself a"
              + " month before it expires).")
  boolean rotateCerts;

  @Option(
      names = "--peers",
      paramLabel = "H:P,H:P,H:P",
      defaultValue = "",
      description =
          "All replicas of the group (this one included), as their --listen"
              + " addresses; H:P:RAFTPORT to choose the Raft port. Omit for a single replica.")
  String peers;

  @Option(
      names = "--join",
      description =
          "This replica joins a group that already runs (a replacement for one whose data"
              + " directory was lost, or a new member): on an empty data directory it waits,"
              + " without voting, until a member adds it (`kairos replicas add H:P`). Ignored"
              + " once the data directory holds a log; never give it to a new group's first"
              + " start.")
  boolean join;

  @Option(
      names = "--policy",
      defaultValue = "kairos",
      description = "Scheduling policy: fcfs, easy, conservative, sjf or kairos (default).")
  String policy;

  @Option(
      names = "--tls-keystore",
      paramLabel = "FILE",
      description = "Serve HTTPS with the certificate and key in this PKCS#12 file.")
  Path tlsKeystore;

  @Option(
      names = "--tls-password-file",
      paramLabel = "FILE",
      description = "File holding the keystore's password (default: empty password).")
  Path tlsPasswordFile;

  @Option(
      names = "--tenancy",
      paramLabel = "FILE",
      description =
          "A tenancy file (docs/tenancy.md): queues with quotas, cohorts, priority classes"
              + " and fair-share accounts. Jobs must then name a configured queue; quotas, fair share"
              + " and preemption apply. On a first start it becomes version 1 of the replicated"
              + " configuration; change it later with `kairos config apply FILE` (no restart).")
  Path tenancy;

  @Option(
      names = "--slurm-names",
      paramLabel = "FILE",
      description =
          "The site's Slurm names (docs/slurm.md): GPU types as the agents' models, partitions as"
              + " queues, and whether an unknown --qos is refused (strictQos). Give every replica"
              + " the same file.")
  Path slurmNames;

  @Option(
      names = "--admin-runs-as",
      paramLabel = "ACCOUNT",
      description =
          "The Unix account the bootstrap admin's jobs (DATA/admin.token) run as (default: the"
              + " account this server runs as). Other users' jobs run as their own accounts (the"
              + " same name, or what `kairos users set` maps them to).")
  String adminRunsAs;

  @Option(
      names = "--allow-root-jobs",
      description =
          "Accept jobs that run as root. Off by default: a submission whose account is root is"
              + " refused. For a single-user machine whose user is root, never a shared cluster.")
  boolean allowRootJobs;

  @Option(
      names = "--private-data",
      paramLabel = "LEVEL",
      defaultValue = "owner",
      description =
          "Who may read a job's env, command, workdir, output paths, checkpoint directory and"
              + " logs: owner (its owner and admins; the default), account (also the users under"
              + " the job's account in the tenancy's account tree) or all (every user). Everything"
              + " else about a job is shown to all users. Give every replica the same.")
  String privateData;

  @Option(
      names = "--accounting",
      paramLabel = "STORE",
      defaultValue = "sqlite",
      description =
          "Where ended jobs are kept (history, reports, fair-share usage): sqlite (a file in the"
              + " data directory; the default) or postgresql://HOST[:PORT]/DATABASE[?user=NAME]"
              + " (no password here: see --accounting-password-file). Give every replica the same.")
  String accounting;

  @Option(
      names = "--accounting-password-file",
      paramLabel = "FILE",
      description =
          "The PostgreSQL password, read from this file (else $KAIROS_ACCOUNTING_PASSWORD).")
  Path accountingPasswordFile;

  @Option(
      names = "--retain-finished",
      paramLabel = "TIME",
      defaultValue = "10m",
      description =
          "How long an ended job stays in the replicated state once it is in the accounting"
              + " store (default ${DEFAULT-VALUE}); after that it is read from the store.")
  String retainFinished;

  @Option(
      names = "--retain-finished-count",
      paramLabel = "N",
      defaultValue = "10000",
      description =
          "At most N ended jobs stay in the replicated state, the most recently ended"
              + " (default ${DEFAULT-VALUE}).")
  long retainFinishedCount;

  /** The accounting store and the retention from the options. */
  io.kairos.control.accounting.AccountingSettings accountingSettings() throws java.io.IOException {
    Optional<String> fromFile =
        accountingPasswordFile == null
            ? Optional.empty()
            : Optional.of(Files.readString(accountingPasswordFile, StandardCharsets.UTF_8).strip());
    try {
      return io.kairos.control.accounting.AccountingSettings.parse(
              accounting,
              fromFile,
              Optional.ofNullable(
                  System.getenv(io.kairos.control.accounting.AccountingSettings.PASSWORD_ENV)))
          .withRetention(
              java.time.Duration.ofMillis(Durations.millis(retainFinished, "--retain-finished")),
              retainFinishedCount);
    } catch (IllegalArgumentException e) {
      throw new UsageException(e.getMessage());
    }
  }

  @Option(
      names = "--phi-threshold",
      paramLabel = "PHI",
      defaultValue = "8.0",
      description =
          "Failure detector: an agent whose phi passes this is DOWN and its jobs are"
              + " requeued (default ${DEFAULT-VALUE}, Akka's; with 1 s heartbeats about 5 s of silence).")
  double phiThreshold;

  @Option(
      names = "--phi-window",
      paramLabel = "N",
      defaultValue = "1000",
      description =
          "Failure detector: heartbeat intervals remembered per agent (default ${DEFAULT-VALUE}).")
  int phiWindow;

  @Option(
      names = "--phi-min-std-dev",
      paramLabel = "TIME",
      defaultValue = "100ms",
      description =
          "Failure detector: the least standard deviation assumed (default ${DEFAULT-VALUE}).")
  String phiMinStdDev;

  @Option(
      names = "--acceptable-heartbeat-pause",
      paramLabel = "TIME",
      defaultValue = "3s",
      description =
          "Failure detector: a pause this long is not yet suspicious (default ${DEFAULT-VALUE}).")
  String acceptablePause;

  @Option(
      names = "--lease",
      paramLabel = "TIME",
      defaultValue = "3500ms",
      description =
          "How long an agent's lease lasts after its last accepted heartbeat: a lost node's jobs run"
              + " elsewhere about --lease + --lease-margin after it fell silent, and an agent that"
              + " cannot reach the leader for about --lease minus 2 s kills its tasks"
              + " (default ${DEFAULT-VALUE}; 2s to 1h).")
  String lease;

  @Option(
      names = "--lease-margin",
      paramLabel = "TIME",
      defaultValue = "500ms",
      description =
          "Added to a lost agent's lease before its GPUs go to other jobs: the agent's clock"
              + " drift and the kill of its tasks (default ${DEFAULT-VALUE}; at least 200 ms + 1% of"
              + " --lease).")
  String leaseMargin;

  /** The agents' lease from the options. */
  LeaseSettings leaseSettings() {
    try {
      return new LeaseSettings(
          Durations.millis(lease, "--lease"), Durations.millis(leaseMargin, "--lease-margin"));
    } catch (IllegalArgumentException e) {
      throw new UsageException("--lease, --lease-margin: " + e.getMessage());
    }
  }

  /** The failure detector's settings from the options. */
  PhiAccrualDetector.Settings detection() {
    try {
      return new PhiAccrualDetector.Settings(
          phiThreshold,
          phiWindow,
          Durations.millis(phiMinStdDev, "--phi-min-std-dev"),
          Durations.millis(acceptablePause, "--acceptable-heartbeat-pause"),
          PhiAccrualDetector.Settings.AKKA_DEFAULTS.firstHeartbeatEstimateMs());
    } catch (IllegalArgumentException e) {
      throw new UsageException("failure detector: " + e.getMessage());
    }
  }

  @Override
  public Integer call() throws Exception {
    ServerLogging.configure();
    Path dir = DataDir.resolve(data);
    var tenancySetup = tenancy == null ? null : TenancyFile.read(tenancy);
    var names = slurmNames == null ? SlurmNames.DEFAULTS : readSlurmNames(slurmNames);
    Optional<Controller.Tls> tls = Optional.empty();
    if (tlsKeystore != null) {
      String password =
          tlsPasswordFile == null
              ? ""
              : Files.readString(tlsPasswordFile, StandardCharsets.UTF_8).strip();
      tls = Optional.of(new Controller.Tls(tlsKeystore, password));
    }
    var level =
        PrivateData.parse(privateData)
            .orElseThrow(
                () ->
                    new UsageException(
                        "--private-data "
                            + privateData
                            + " is unknown; use owner, account or all"));
    var config =
        ControllerMain.config(dir, listen, peers, policy, tls)
            .withDetection(detection())
            .withLease(leaseSettings())
            .withPrivateData(level)
            .withRunAs(runAs(adminRunsAs, allowRootJobs))
            .withSecurity(security())
            .withSlurm(names)
            .withJoin(join);
    var controller =
        Controller.start(
            tenancySetup == null ? config : config.withTenancy(tenancySetup), accountingSettings());
    System.err.println("kairos: controller serving " + controller.url() + " (data " + dir + ")");
    joinHint(controller, dir).forEach(System.err::println);
    awaitShutdown(controller::close);
    return 0;
  }

  /** The site's Slurm names file, read and checked; every problem at once (exit code 2). */
  static SlurmNames readSlurmNames(Path file) {
    try {
      return SlurmNamesYaml.read(file);
    } catch (TenancyYaml.InvalidConfig e) {
      throw new UsageException("--slurm-names: the file is not valid:\n" + e.getMessage());
    }
  }

  /** Who jobs run as: {@code adminRunsAs} null for the account this process runs as. */
  static RunAsPolicy runAs(String adminRunsAs, boolean allowRootJobs) {
    try {
      return RunAsPolicy.of(adminRunsAs, allowRootJobs);
    } catch (IllegalArgumentException e) {
      throw new UsageException(e.getMessage());
    }
  }

  NetworkSecurity security() {
    if (forceTls && insecure) {
      throw new UsageException("--tls and --insecure contradict each other: give one");
    }
    var mode =
        insecure
            ? NetworkSecurity.Mode.INSECURE
            : forceTls ? NetworkSecurity.Mode.TLS : NetworkSecurity.Mode.AUTO;
    return new NetworkSecurity(
        mode,
        Optional.ofNullable(raftListen),
        sans,
        Optional.ofNullable(caFrom).map(Path::toAbsolutePath),
        rotateCerts);
  }

  /** The plain-text warnings, and how a node joins: the command with the CA's hash. */
  static List<String> joinHint(Controller controller, Path dir) {
    var lines = new ArrayList<String>();
    for (String w : controller.plainTextWarnings()) {
      lines.add("kairos: WARNING: " + w);
    }
    String url = controller.url();
    Path token = dir.resolve("join.token");
    if (url.startsWith("https://") && controller.caHash().isPresent()) {
      lines.add(
          "kairos: cluster CA " + controller.caHash().get() + " (" + dir.resolve("ca.pem") + ")");
      lines.add("kairos: to join a node, copy " + token + " to it and run there:");
      lines.add(
          "  kairos agent --controller "
              + url
              + " --ca-hash "
              + controller.caHash().get()
              + " --join-token-file join.token");
    } else {
      lines.add(
          "kairos: to join a node: kairos agent --controller "
              + url
              + " --join-token-file "
              + token);
    }
    return lines;
  }

  /** Blocks until the JVM is asked to stop (Ctrl-C, SIGTERM), then runs {@code close}. */
  static void awaitShutdown(AutoCloseable close) throws InterruptedException {
    var stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  try {
                    close.close();
                  } catch (Exception e) {
                    System.err.println("kairos: shutdown: " + e.getMessage());
                  }
                  stopped.countDown();
                }));
    stopped.await();
  }
}

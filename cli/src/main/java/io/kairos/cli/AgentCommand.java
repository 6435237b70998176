package io.kairos.cli;

import io.kairos.agent.Agent;
import io.kairos.agent.AgentConfig;
import io.kairos.agent.ControllerTrust;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.Random;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code kairos agent}: the node agent, until stopped. */
@Command(
    name = "agent",
    mixinStandardHelpOptions = true,
    description = {
      "Runs the node agent: registers this node's GPUs with the controller, heartbeats, and"
          + " runs the tasks it is given as processes (CUDA_VISIBLE_DEVICES set to their GPUs).",
      "",
      "GPUs are found with nvidia-smi (index, UUID, model, memory, ECC, temperature, NVLink"
          + " topology), and checked every --health-interval and before each task starts; an"
          + " unhealthy node is drained with the reason. Without a GPU, --emulate-gpus models"
          + " them. Each task runs in a cgroup of its own where the kernel allows, and a fence"
          + " watchdog kills the tasks if the agent loses its lease, even while it is frozen."
    })
final class AgentCommand implements java.util.concurrent.Callable<Integer> {
  @Option(
      names = "--controller",
      required = true,
      paramLabel = "URL[,URL...]",
      description = "The controller replicas' base URLs, e.g. http://ctl:8080.")
  String controllers;

  @Option(
      names = "--join-token",
      paramLabel = "TOKEN",
      description =
          "A join token (the controller's DATA/join.token, or `kairos token create --join`). A"
              + " node needs it to join once; later starts prove the node with its own credential"
              + " (kept in DATA/identity/).")
  String joinToken;

  @Option(
      names = "--join-token-file",
      paramLabel = "FILE",
      description = "Read the join token from this file instead.")
  Path joinTokenFile;

  @Option(
      names = "--node-name",
      paramLabel = "NAME",
      description = "This node's name (default: the host name).")
  String nodeName;

  @Option(
      names = "--data",
      paramLabel = "DIR",
      description = "Where task directories and logs go (default: ~/.kairos/agent-NAME).")
  Path data;

  @Option(
      names = "--emulate-gpus",
      paramLabel = "SPEC",
      description =
          "GPUs to emulate instead of discovering them: a count or COUNTxMODEL, e.g. 8 or 8xH100-80GB.")
  String gpus;

  @Option(
      names = "--nvidia-smi",
      paramLabel = "PATH",
      defaultValue = "nvidia-smi",
      description =
          "The nvidia-smi to discover and check GPUs with (default: ${DEFAULT-VALUE} on the PATH).")
  String nvidiaSmi;

  @Option(
      names = "--health-check-program",
      paramLabel = "PROGRAM",
      description =
          "A site check run with every health check (like Slurm's HealthCheckProgram or NHC):"
              + " exit 0 is healthy; otherwise the node is drained with the first line it printed.")
  String healthCheckProgram;

  @Option(
      names = "--health-interval",
      paramLabel = "TIME",
      defaultValue = "30s",
      description = "How often to check the node's health (default: ${DEFAULT-VALUE}).")
  String healthInterval;

  @Option(
      names = "--cpus",
      paramLabel = "N",
      description =
          "CPUs to advertise (default: this machine's). With --emulate-gpus, give the node's"
              + " emulated size: a job asks 1 CPU by default, so a node of 8 GPUs advertising 2"
              + " CPUs runs only 2 one-GPU jobs at once.")
  Integer cpus;

  @Option(
      names = "--fence-margin",
      paramLabel = "TIME",
      defaultValue = "250ms",
      description =
          "Kill the tasks this long before the lease runs out, so that they are dead by its end"
              + " when the controller may give their GPUs away (default ${DEFAULT-VALUE}; at most"
              + " a quarter of the lease counts).")
  String fenceMargin;

  @Option(names = "--no-cgroups", description = "Do not put tasks in cgroups of their own.")
  boolean noCgroups;

  @Option(
      names = "--listen",
      paramLabel = "HOST:PORT",
      defaultValue = "127.0.0.1:0",
      description = "Where the agent's log server listens (default: ${DEFAULT-VALUE}, any port).")
  String listen;

  @Option(names = "--rack", defaultValue = "rack-0", description = "This node's rack.")
  String rack;

  @Option(
      names = "--stop-tasks-on-exit",
      description =
          "On SIGTERM, stop every task before exiting (their jobs are requeued). By default the"
              + " tasks keep running and the next agent started on the same --data adopts them.")
  boolean stopTasksOnExit;

  @Option(
      names = "--allow-root-jobs",
      description =
          "Run tasks whose account is root (uid 0). Off by default: such a task fails. For a"
              + " single-user machine whose user is root, never a shared cluster.")
  boolean allowRootJobs;

  @Option(
      names = "--ca-hash",
      paramLabel = "sha256:HEX",
      description =
          "Pin the cluster CA: on first contact fetch it from the controller (no token sent),"
              + " check its public key's hash, keep it as DATA/ca.pem and verify the controller"
              + " against it on every call. `kairos server` prints the hash.")
  String caHash;

  @Option(
      names = "--ca",
      paramLabel = "FILE",
      description = "Verify the controller against the CA in this PEM file instead.")
  Path caFile;

  @Option(
      names = "--insecure",
      description =
          "Allow a plain http:// controller off this machine: the join token travels in clear.")
  boolean insecure;

  @Option(
      names = "--checkpoint-s3-endpoint",
      paramLabel = "URL",
      description =
          "The S3-compatible endpoint (http(s)://host:port) told to the tasks of jobs that keep"
              + " their checkpoints in object storage (checkpointDir s3://bucket/prefix), as"
              + " KAIROS_S3_ENDPOINT. Default: AWS's own.")
  String checkpointS3Endpoint;

  @Override
  public Integer call() throws Exception {
    ServerLogging.configure();
    String name =
        nodeName != null ? nodeName : InetAddress.getLocalHost().getHostName().split("\\.")[0];
    Path dir = data != null ? data : Environment.home.resolve(".kairos").resolve("agent-" + name);
    String token =
        joinToken == null && joinTokenFile == null && Agent.holdsCredential(dir)
            ? null
            : token(joinToken, joinTokenFile);
    var urls = AgentConfig.parseControllers(controllers);
    var builder = builder(urls, token, name, dir, gpus, listen, rack);
    builder.caFile(trustedCa(urls, dir)).insecure(insecure);
    if (gpus == null) {
      builder.nvidiaSmi(nvidiaSmi);
    }
    if (healthCheckProgram != null) {
      builder.healthCheckProgram(java.util.List.of(healthCheckProgram));
    }
    builder.healthIntervalMs(Durations.millis(healthInterval, "--health-interval"));
    builder.cgroups(!noCgroups);
    long fenceMarginMs = Durations.millis(fenceMargin, "--fence-margin");
    if (fenceMarginMs > AgentConfig.MAX_FENCE_MARGIN_MS) {
      throw new UsageException(
          "--fence-margin "
              + fenceMargin
              + " is too long: at most 60s (a quarter of the lease counts)");
    }
    builder.fenceMarginMs(fenceMarginMs);
    if (cpus != null) {
      if (cpus < 1) {
        throw new UsageException("--cpus must be at least 1, got " + cpus);
      }
      builder.cpus(cpus);
    }
    builder.allowRootJobs(allowRootJobs);
    builder.checkpointS3Endpoint(checkpointS3Endpoint);
    AgentConfig config;
    try {
      config = builder.build();
    } catch (IllegalArgumentException e) {
      throw new UsageException(e.getMessage());
    }
    Agent agent;
    try {
      agent = new Agent(config, InstantSource.system(), new Random());
    } catch (IllegalArgumentException e) {
      throw new UsageException(e.getMessage());
    } catch (IllegalStateException e) {
      throw new UsageException(
          e.getMessage()
              + (gpus == null ? "\n(no GPU here? run with --emulate-gpus N to emulate them)" : ""));
    }
    agent.start();
    System.err.println(
        "kairos: agent "
            + name
            + " running "
            + (gpus == null ? "the GPUs nvidia-smi found" : config.gpus())
            + " for "
            + controllers);
    System.err.println("kairos: " + agent.runsAs());
    // SIGTERM (an upgrade, a restart) leaves the tasks running for the next agent to adopt.
    Runtime.getRuntime()
        .addShutdownHook(new Thread(stopTasksOnExit ? agent::close : agent::detach));
    var exit = agent.awaitStop();
    System.err.println("kairos: agent stopped: " + exit);
    return 0;
  }

  /**
   * The CA file the agent verifies its controller against: {@code --ca}, else the CA pinned in its
   * data directory, else (with {@code --ca-hash}) the one fetched and checked on first contact,
   * waiting for a controller to answer; null for none.
   */
  Path trustedCa(java.util.List<String> urls, Path dir)
      throws java.io.IOException, InterruptedException {
    var hash = java.util.Optional.ofNullable(caHash).map(ControllerTrust::parseHash);
    if (caFile != null) {
      if (hash.isPresent()
          && ControllerTrust.readCertificates(caFile).stream()
              .noneMatch(c -> ControllerTrust.spkiSha256(c).equals(hash.get()))) {
        throw new UsageException("--ca " + caFile + " holds no CA with the hash " + hash.get());
      }
      return caFile;
    }
    try {
      var stored = ControllerTrust.stored(dir, hash);
      if (stored.isPresent() || hash.isEmpty()) {
        return stored.orElse(null);
      }
      while (true) {
        try {
          Path pinned = ControllerTrust.pin(urls, hash.get(), dir);
          System.err.println("kairos: pinned the cluster CA " + hash.get() + " in " + pinned);
          return pinned;
        } catch (ControllerTrust.PinMismatchException e) {
          throw e;
        } catch (java.io.IOException e) {
          System.err.println("kairos: waiting for a controller to fetch the CA: " + e.getMessage());
          Thread.sleep(2_000);
        }
      }
    } catch (ControllerTrust.PinMismatchException e) {
      throw new UsageException(e.getMessage());
    }
  }

  static AgentConfig config(
      java.util.List<String> controllers,
      String token,
      String name,
      Path dir,
      String gpus,
      String listen,
      String rack) {
    return builder(controllers, token, name, dir, gpus, listen, rack).build();
  }

  static AgentConfig.Builder builder(
      java.util.List<String> controllers,
      String token,
      String name,
      Path dir,
      String gpus,
      String listen,
      String rack) {
    int colon = listen.lastIndexOf(':');
    if (colon <= 0) {
      throw new UsageException("--listen " + listen + " must be HOST:PORT");
    }
    int port;
    try {
      port = Integer.parseInt(listen.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw new UsageException("--listen " + listen + ": the port is not a number");
    }
    var builder =
        AgentConfig.builder(controllers, token, name, dir)
            .listen(listen.substring(0, colon), port)
            .topology("zone-0", "block-0", rack);
    if (gpus != null) {
      builder.gpus(gpus);
    }
    return builder;
  }

  static String token(String token, Path file) throws java.io.IOException {
    if (token != null) {
      return token.strip();
    }
    if (file != null) {
      return Files.readString(file, StandardCharsets.UTF_8).strip();
    }
    throw new UsageException(
        "give --join-token or --join-token-file (the controller's DATA/join.token, or `kairos"
            + " token create --join`): this node has not joined yet");
  }
}

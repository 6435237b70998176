package io.kairos.cli;

import io.kairos.agent.Agent;
import io.kairos.control.Controller;
import io.kairos.control.ControllerMain;
import io.kairos.control.auth.RunAsPolicy;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code kairos up}: a whole local cluster in one process: a controller and one agent. */
@Command(
    name = "up",
    mixinStandardHelpOptions = true,
    description = {
      "Starts Kairos on this machine: an embedded controller (one replica, data under --data)"
          + " and a local agent that emulates --gpus GPUs and runs each task as a real process"
          + " with CUDA_VISIBLE_DEVICES set to its GPU indexes.",
      "",
      "Then, in another terminal: kairos submit --gpus 2 -- python3 train.py; kairos queue."
    })
final class UpCommand implements Callable<Integer> {
  @Option(
      names = "--data",
      paramLabel = "DIR",
      description = "Data directory (default: $KAIROS_DATA or ~/.kairos).")
  Path data;

  @Option(
      names = "--listen",
      paramLabel = "HOST:PORT",
      defaultValue = "127.0.0.1:8080",
      description = "Where the API listens (default: ${DEFAULT-VALUE}).")
  String listen;

  @Option(
      names = "--gpus",
      paramLabel = "SPEC",
      defaultValue = "4",
      description =
          "GPUs the local agent emulates: a count or COUNTxMODEL (default: ${DEFAULT-VALUE}).")
  String gpus;

  @Option(names = "--node-name", defaultValue = "local", description = "The local node's name.")
  String nodeName;

  @Option(names = "--policy", defaultValue = "kairos", description = "Scheduling policy.")
  String policy;

  @Option(
      names = "--tenancy",
      paramLabel = "FILE",
      description =
          "A tenancy file (docs/tenancy.md): queues with quotas, cohorts, priority classes"
              + " and fair-share accounts. Jobs must then name a configured queue; quotas, fair share"
              + " and preemption apply. Give every replica the same file.")
  Path tenancy;

  @Override
  public Integer call() throws Exception {
    ServerLogging.configure();
    Path dir = DataDir.resolve(data);
    var tenancySetup = tenancy == null ? null : TenancyFile.read(tenancy);
    // One user: the admin's jobs run as whoever runs `kairos up`. When that is root, root jobs
    // are allowed (the user already is root); otherwise the jobs run as that user.
    String self = System.getProperty("user.name");
    boolean root = RunAsPolicy.ROOT.equals(self);
    var controllerConfig =
        ControllerMain.config(dir, listen, "", policy, Optional.empty())
            .withRunAs(new RunAsPolicy(self, root));
    var controller =
        Controller.start(
            tenancySetup == null ? controllerConfig : controllerConfig.withTenancy(tenancySetup));
    Agent agent;
    try {
      // The local agent dials loopback, and verifies HTTPS (off-loopback --listen) against the CA.
      String url = controller.url().replace("://0.0.0.0:", "://127.0.0.1:");
      var builder =
          AgentCommand.builder(
                  List.of(url),
                  controller.joinToken(),
                  nodeName,
                  dir.resolve("agent-" + nodeName),
                  gpus,
                  "127.0.0.1:0",
                  "rack-0")
              .allowRootJobs(root);
      if (url.startsWith("https://")) {
        builder.caFile(dir.resolve("ca.pem"));
      }
      var config = builder.build();
      agent = new Agent(config, InstantSource.system(), new Random());
      agent.start();
    } catch (RuntimeException | java.io.IOException e) {
      controller.close();
      throw e;
    }
    System.out.println("Kairos is up: " + controller.url());
    System.out.println(
        "  data:        " + dir + "  (admin token in " + dir.resolve("admin.token") + ")");
    System.out.println("  local node:  " + nodeName + " with " + gpus + " emulated GPU(s)");
    System.out.println(
        "  jobs run as: "
            + self
            + (root ? " (root: --allow-root-jobs, for this single-user machine)" : ""));
    System.out.println(
        "  try:         ./kairos submit --gpus 1 -- nvidia-smi -L   (or any command)");
    System.out.println("               ./kairos queue | nodes | history | logs ID");
    System.out.println("Stop with Ctrl-C.");
    System.out.flush();
    ServerCommand.awaitShutdown(
        () -> {
          agent.close();
          controller.close();
        });
    return 0;
  }
}

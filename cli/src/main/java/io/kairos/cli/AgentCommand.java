package io.kairos.cli;

import io.kairos.agent.Agent;
import io.kairos.agent.AgentConfig;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.Random;
import java.util.concurrent.Callable;
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
      "This release emulates GPUs (--emulate-gpus); discovery through nvidia-smi comes next."
    })
final class AgentCommand implements java.util.concurrent.Callable<Integer> {
  @Option(names = "--controller", required = true, paramLabel = "URL[,URL...]",
      description = "The controller replicas' base URLs, e.g. http://ctl:8080.")
  String controllers;

  @Option(names = "--join-token", paramLabel = "TOKEN",
      description = "The join token (the controller's DATA/join.token).")
  String joinToken;

  @Option(names = "--join-token-file", paramLabel = "FILE",
      description = "Read the join token from this file instead.")
  Path joinTokenFile;

  @Option(names = "--node-name", paramLabel = "NAME",
      description = "This node's name (default: the host name).")
  String nodeName;

  @Option(names = "--data", paramLabel = "DIR",
      description = "Where task directories and logs go (default: ~/.kairos/agent-NAME).")
  Path data;

  @Option(names = "--emulate-gpus", required = true, paramLabel = "SPEC",
      description = "GPUs to emulate: a count or COUNTxMODEL, e.g. 8 or 8xH100-80GB.")
  String gpus;

  @Option(names = "--listen", paramLabel = "HOST:PORT", defaultValue = "127.0.0.1:0",
      description = "Where the agent's log server listens (default: ${DEFAULT-VALUE}, any port).")
  String listen;

  @Option(names = "--rack", defaultValue = "rack-0", description = "This node's rack.")
  String rack;

  @Override
  public Integer call() throws Exception {
    ServerLogging.configure();
    String token = token(joinToken, joinTokenFile);
    String name = nodeName != null ? nodeName : InetAddress.getLocalHost().getHostName().split("\\.")[0];
    Path dir = data != null ? data : Environment.home.resolve(".kairos").resolve("agent-" + name);
    var config = config(AgentConfig.parseControllers(controllers), token, name, dir, gpus, listen, rack);
    var agent = new Agent(config, InstantSource.system(), new Random());
    agent.start();
    System.err.println("kairos: agent " + name + " running " + config.gpus() + " for " + controllers);
    Runtime.getRuntime().addShutdownHook(new Thread(agent::close));
    var exit = agent.awaitStop();
    System.err.println("kairos: agent stopped: " + exit);
    return 0;
  }

  static AgentConfig config(java.util.List<String> controllers, String token, String name, Path dir,
      String gpus, String listen, String rack) {
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
    return AgentConfig.builder(controllers, token, name, dir)
        .gpus(gpus)
        .listen(listen.substring(0, colon), port)
        .topology("zone-0", "block-0", rack)
        .build();
  }

  static String token(String token, Path file) throws java.io.IOException {
    if (token != null) {
      return token.strip();
    }
    if (file != null) {
      return Files.readString(file, StandardCharsets.UTF_8).strip();
    }
    throw new UsageException("give --join-token or --join-token-file (the controller's DATA/join.token)");
  }
}

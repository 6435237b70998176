package io.kairos.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code kairos bench}: load and latency measurements against a running controller. */
@Command(
    name = "bench",
    mixinStandardHelpOptions = true,
    subcommands = {
      BenchSubmitCommand.class,
      BenchLatencyCommand.class,
      BenchHeartbeatsCommand.class,
      BenchTurnoverCommand.class,
      BenchStateCommand.class,
      BenchCheckpointCommand.class
    },
    description = {
      "Measure a running controller: `bench submit` (submit throughput and latency under load),"
          + " `bench latency` (submit to running, one job at a time), `bench heartbeats` (many"
          + " agents' heartbeats), `bench turnover` (how fast freed GPUs go to the next job),"
          + " `bench state` (the replicated state's size with and without the accounting store's"
          + " retention; no server), `bench checkpoint` (checkpoint throughput to a directory or"
          + " S3; no server).",
      "submit and latency submit real jobs; heartbeats registers fake agents: use a cluster you may load."
    })
final class BenchCommand implements Runnable {
  @Spec CommandSpec spec;

  @Override
  public void run() {
    throw new ParameterException(
        spec.commandLine(),
        "Missing subcommand: kairos bench submit | latency | heartbeats | turnover | state"
            + " | checkpoint");
  }
}

package io.kairos.cli;

import io.kairos.sim.trace.TraceFormatException;
import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** Entry point of the {@code kairos} command. */
@Command(
    name = "kairos",
    mixinStandardHelpOptions = true,
    version = "kairos 0.1.0",
    description = "Kairos: a job scheduler for GPU clusters.",
    subcommands = {
      UpCommand.class,
      ServerCommand.class,
      AgentCommand.class,
      SimulateCommand.class,
      SubmitCommand.class,
      SbatchCommand.class,
      SqueueCommand.class,
      ScancelCommand.class,
      SinfoCommand.class,
      SacctCommand.class,
      InstallSlurmCommandsCommand.class,
      QueueCommand.class,
      QueuesCommand.class,
      CancelCommand.class,
      ShowCommand.class,
      CheckpointsCommand.class,
      LogsCommand.class,
      HistoryCommand.class,
      ReportCommand.class,
      NodesCommand.class,
      LimitsCommand.class,
      ConfigCommand.class,
      ReplicasCommand.class,
      TokenCommand.class,
      UsersCommand.class,
      TlsCommand.class,
      WhoAmICommand.class,
      BenchCommand.class,
      AotTrainCommand.class,
      CommandLine.HelpCommand.class
    })
public final class Main implements Runnable {
  public static void main(String[] args) {
    System.exit(run(args));
  }

  /** Runs the command line and returns the exit code (for tests). */
  public static int run(String... args) {
    return newCommandLine().execute(args);
  }

  /** Runs the command line printing to {@code out} and {@code err}; returns the exit code. */
  public static int run(PrintWriter out, PrintWriter err, String... args) {
    var cli = newCommandLine();
    cli.setOut(out);
    cli.setErr(err);
    return cli.execute(args);
  }

  private static CommandLine newCommandLine() {
    var cli = new CommandLine(new Main());
    // Slurm's front-ends read their flags themselves, in Slurm's words (SlurmArgs).
    for (String name : InstallSlurmCommandsCommand.COMMANDS) {
      cli.getSubcommands().get(name).setUnmatchedOptionsArePositionalParams(true);
    }
    cli.setExecutionExceptionHandler(
        (e, cmd, parsed) -> {
          if (e instanceof UsageException
              || e instanceof TraceFormatException
              || e instanceof IllegalArgumentException) {
            cmd.getErr().println("kairos: " + e.getMessage());
            return 2;
          }
          throw e;
        });
    return cli;
  }

  @Override
  public void run() {
    new CommandLine(this).usage(System.out);
  }
}

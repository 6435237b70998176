package io.kairos.cli;

import io.kairos.sim.trace.TraceFormatException;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** Entry point of the {@code kairos} command. */
@Command(
    name = "kairos",
    mixinStandardHelpOptions = true,
    version = "kairos 0.1.0",
    description = "Kairos: a job scheduler for GPU clusters.",
    subcommands = {SimulateCommand.class, AotTrainCommand.class, CommandLine.HelpCommand.class})
public final class Main implements Runnable {
  public static void main(String[] args) {
    System.exit(run(args));
  }

  /** Runs the command line and returns the exit code (for tests). */
  public static int run(String... args) {
    var cli = new CommandLine(new Main());
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
    return cli.execute(args);
  }

  @Override
  public void run() {
    new CommandLine(this).usage(System.out);
  }
}

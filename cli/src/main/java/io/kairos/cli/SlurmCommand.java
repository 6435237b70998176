package io.kairos.cli;

import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * A Slurm command's front-end ({@code kairos sbatch}, {@code squeue}, {@code scancel}, {@code
 * sinfo}, {@code sacct}): it takes the Slurm command's own flags, in Slurm's words, and prints
 * Slurm's formats, so scripts and habits written for Slurm work. The flags are parsed here ({@link
 * SlurmArgs}), not by picocli: they clash with Kairos' own ({@code -o} is sbatch's output file).
 * The controller and the token come from the environment as for every kairos command ({@code
 * KAIROS_SERVER}, {@code KAIROS_TOKEN}, {@code KAIROS_DATA}). Errors are one line, {@code NAME:
 * error: ...}, exit code 1, as Slurm's commands report them.
 */
abstract class SlurmCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Parameters(arity = "0..*", paramLabel = "ARG", description = "The Slurm command's arguments.")
  List<String> args = new ArrayList<>();

  /** The Slurm command's name, as its messages begin. */
  abstract String name();

  /** Runs the command; the return value is the exit code. */
  abstract int run(ApiClient api, List<String> args, PrintWriter out, PrintWriter err)
      throws InterruptedException;

  /** The usage text for {@code --help}: what is supported, in the Slurm command's words. */
  abstract String usage();

  @Override
  public final Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    try {
      if (args.contains("--help") || args.contains("--usage")) {
        out.print(usage());
        return 0;
      }
      try (var api = new ClientOptions().connect()) {
        return run(api, args, out, err);
      }
    } catch (ApiException e) {
      return fail(err, e.getMessage());
    } catch (UsageException | IllegalArgumentException e) {
      return fail(err, e.getMessage());
    } catch (UncheckedIOException e) {
      return fail(err, ApiClient.describe(e.getCause()));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return fail(err, "interrupted");
    } finally {
      out.flush();
      err.flush();
    }
  }

  private int fail(PrintWriter err, String message) {
    err.println(name() + ": error: " + message);
    return 1;
  }

  /** A warning line, as Slurm's commands print them. */
  void warn(PrintWriter err, String message) {
    err.println(name() + ": warning: " + message);
  }
}

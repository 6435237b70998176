package io.kairos.cli.slurm;

import java.util.Arrays;
import java.util.List;

/**
 * The entry point of Kairos' Slurm tools, as the agent's scripts call it: {@code SlurmTool srun
 * ARGS...} or {@code SlurmTool scontrol ARGS...}. A plain {@code main}: no command-line library, so
 * that it starts in tens of milliseconds.
 */
public final class SlurmTool {
  private SlurmTool() {}

  public static void main(String[] args) {
    System.exit(run(Arrays.asList(args)));
  }

  /** Runs the tool {@code args} names; returns its exit code. */
  static int run(List<String> args) {
    if (args.isEmpty()) {
      System.err.println("usage: SlurmTool srun|scontrol ARGS...");
      return 2;
    }
    List<String> rest = args.subList(1, args.size());
    return switch (args.getFirst()) {
      case "srun" -> new Srun(System.getenv(), System.out, System.err).run(rest);
      case "scontrol" -> new Scontrol(System.getenv(), System.out, System.err).run(rest);
      default -> {
        System.err.println("unknown tool " + args.getFirst() + ": use srun or scontrol");
        yield 2;
      }
    };
  }
}

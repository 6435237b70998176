package io.kairos.protocol.slurm;

import java.util.Collection;

/**
 * A step's exit code from its tasks', as srun computes it: when any task was killed by a signal,
 * 128 plus the highest such signal (it wins over every exit code: exit 5 and SIGTERM give 143);
 * otherwise the highest exit code. Checked on Slurm 22.05: exit 1, 2, 3 give 3; exit 2 and SIGKILL
 * give 137; SIGTERM and SIGKILL, in either order, give 143.
 *
 * <p>Codes are as the agent reports them: 0-255 for an exit, 128 + N for a process killed by signal
 * N (as the JDK and shells write it), and {@link #LOST} for a task lost with its node, which counts
 * as killed by SIGKILL.
 */
public final class StepExit {
  /** The code of a task that was lost with its node (the controller's {@code LOST_EXIT_CODE}). */
  public static final int LOST = -1;

  private static final int SIGKILL = 9;

  private StepExit() {}

  /** The step's exit code; 0 for no tasks. */
  public static int of(Collection<Integer> codes) {
    int highestExit = 0;
    int highestSignal = 0;
    for (Integer code : codes) {
      if (code == null) {
        continue;
      }
      int signal = signal(code);
      if (signal > 0) {
        highestSignal = Math.max(highestSignal, signal);
      } else {
        highestExit = Math.max(highestExit, code & 0xff);
      }
    }
    return highestSignal > 0 ? 128 + highestSignal : highestExit;
  }

  /** The signal that killed a task with {@code code}; 0 when it exited. */
  public static int signal(int code) {
    if (code < 0) {
      return SIGKILL;
    }
    return code > 128 && code <= 128 + 64 ? code - 128 : 0;
  }

  /**
   * What srun says of a task's end: "Exited with exit code 3", "Killed", "Terminated", ...; null
   * for a task that exited 0.
   */
  public static String describe(int code) {
    if (code < 0) {
      return "Killed (its node was lost)";
    }
    int signal = signal(code);
    if (signal == 0) {
      return code == 0 ? null : "Exited with exit code " + code;
    }
    return switch (signal) {
      case 1 -> "Hangup";
      case 2 -> "Interrupt";
      case 3 -> "Quit";
      case 4 -> "Illegal instruction";
      case 5 -> "Trace/breakpoint trap";
      case 6 -> "Aborted";
      case 7 -> "Bus error";
      case 8 -> "Floating point exception";
      case 9 -> "Killed";
      case 10 -> "User defined signal 1";
      case 11 -> "Segmentation fault";
      case 12 -> "User defined signal 2";
      case 13 -> "Broken pipe";
      case 14 -> "Alarm clock";
      case 15 -> "Terminated";
      default -> "Killed by signal " + signal;
    };
  }
}

package io.kairos.control;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The controller's last resort: a thread it cannot run without (the scheduler loop, the submit
 * batcher, the liveness monitor, the utilization sampler, the state machine's apply) met a {@link
 * Throwable} it could not handle, typically an {@link Error}. Rather than go on serving with that
 * thread dead (reads answered, writes hanging, {@code /healthz} still 200), the process exits with
 * status {@value #EXIT_STATUS}, so its supervisor (systemd, Kubernetes) restarts it; the log,
 * fsynced before every commit, brings it back. {@code -XX:+ExitOnOutOfMemoryError} does the same
 * for an {@link OutOfMemoryError} anywhere.
 *
 * <p>The exit is {@link Runtime#halt}: shutdown hooks would try to stop the very parts that failed.
 */
public final class Fatal {
  /** The exit status of a controller that stopped on a fatal error (EX_SOFTWARE). */
  public static final int EXIT_STATUS = 70;

  private static final Logger LOG = LoggerFactory.getLogger(Fatal.class);

  /** For threads that must not die: an uncaught throwable stops the process. */
  public static final Thread.UncaughtExceptionHandler EXIT =
      (thread, e) -> exit("thread " + thread.getName() + " died", e);

  private Fatal() {}

  /** Logs {@code what} and {@code e}, then stops the process with {@link #EXIT_STATUS}. */
  public static void exit(String what, Throwable e) {
    try {
      LOG.error("fatal: {}; exiting so that a supervisor restarts the controller", what, e);
      System.err.println("kairos: fatal: " + what + ": " + e + "; exiting");
      System.err.flush();
    } catch (Throwable logging) {
      // out of memory, most likely: exit all the same
    } finally {
      Runtime.getRuntime().halt(EXIT_STATUS);
    }
  }
}

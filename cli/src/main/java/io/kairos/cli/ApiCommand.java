package io.kairos.cli;

import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.util.concurrent.Callable;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * A command that talks to a controller through the REST API. It gets the shared options ({@link
 * ClientOptions}), a connected {@link ApiClient} and the output writer, and turns every failure
 * into one line on stderr starting {@code kairos: } and an exit code: 2 for bad input, 1 for
 * anything else (see {@link ApiException#exitCode}). Never a stack trace.
 *
 * <p>Options left unset on a nested command ({@code kairos nodes --server X drain n1}) are taken
 * from the parent command when it is an {@code ApiCommand} too.
 */
abstract class ApiCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Mixin ClientOptions options;

  /** Runs the command; the return value is the exit code. */
  abstract int run(ApiClient api, PrintWriter out) throws InterruptedException;

  @Override
  public final Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    try {
      options = effectiveOptions();
      try (var api = options.connect()) {
        return run(api, out);
      }
    } catch (ApiException e) {
      return fail(err, e.getMessage(), e.exitCode());
    } catch (UsageException e) {
      return fail(err, e.getMessage(), 2);
    } catch (UncheckedIOException e) {
      return fail(err, ApiClient.describe(e.getCause()), 1);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return fail(err, "interrupted", 130);
    } catch (RuntimeException e) {
      // A bug: still one line (the trace with KAIROS_DEBUG=1), so scripts and people get the same.
      if (Environment.variable("KAIROS_DEBUG") != null) {
        e.printStackTrace(err);
      }
      return fail(err, "internal error (a bug, please report it): " + e, 1);
    } finally {
      out.flush();
    }
  }

  private static int fail(PrintWriter err, String message, int code) {
    err.println("kairos: " + message);
    err.flush();
    return code;
  }

  private ClientOptions effectiveOptions() {
    ClientOptions merged = options;
    for (CommandSpec p = spec.parent(); p != null; p = p.parent()) {
      if (p.userObject() instanceof ApiCommand parent && parent.options != null) {
        merged = merged.orElse(parent.options);
      }
    }
    return merged;
  }

  boolean isCsv() {
    return options.isCsv();
  }

  boolean isJson() {
    return options.isJson();
  }
}

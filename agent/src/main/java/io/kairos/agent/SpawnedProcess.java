package io.kairos.agent;

import java.io.InputStream;
import java.io.OutputStream;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A child started by {@link NativeSpawn}, seen by the rest of the agent as any {@link Process}: its
 * pid and handle (for signals and the fence watchdog), its exit, and a stdin when it has a pipe.
 *
 * <p>Its exit is reaped by a platform thread of a small pool of this class's own, blocked in {@code
 * waitpid} on that pid alone, as the JDK's "process reaper" threads do for the processes it starts
 * (a blocking native call would pin a virtual thread's carrier). The handle is taken before that
 * thread starts, so it names this child even if its pid is reused once reaped ({@link
 * ProcessHandle} compares start times before it signals). The exit value is what the JDK reports:
 * the exit code, or 128 + the signal that killed it.
 */
final class SpawnedProcess extends Process {
  private static final ExecutorService REAPERS =
      Executors.newCachedThreadPool(
          Thread.ofPlatform().name("kairos-reaper-", 0).daemon().stackSize(256 * 1024).factory());

  private final int pid;
  private final ProcessHandle handle;
  private final OutputStream stdin;
  private final CompletableFuture<Integer> exit = new CompletableFuture<>();

  SpawnedProcess(int pid, OutputStream stdin) {
    this.pid = pid;
    // A child no one else reaps: it is there (alive, or a zombie until reaped below).
    this.handle =
        ProcessHandle.of(pid)
            .orElseThrow(() -> new IllegalStateException("spawned pid " + pid + " is not there"));
    this.stdin = stdin == null ? OutputStream.nullOutputStream() : stdin;
    REAPERS.execute(() -> exit.complete(exitValue(NativeSpawn.waitFor(pid))));
  }

  /** The JDK's exit value for a wait status: the code, or 0x80 + the signal. */
  static int exitValue(int status) {
    if (status == NativeSpawn.NO_STATUS) {
      return 0x80 + 9;
    }
    int signal = status & 0x7f;
    return signal == 0 ? (status >> 8) & 0xff : 0x80 + signal;
  }

  @Override
  public OutputStream getOutputStream() {
    return stdin;
  }

  @Override
  public InputStream getInputStream() {
    return InputStream.nullInputStream();
  }

  @Override
  public InputStream getErrorStream() {
    return InputStream.nullInputStream();
  }

  @Override
  public int waitFor() throws InterruptedException {
    try {
      return exit.get();
    } catch (ExecutionException e) {
      throw new IllegalStateException(e.getCause());
    }
  }

  @Override
  public boolean waitFor(long timeout, TimeUnit unit) throws InterruptedException {
    try {
      exit.get(timeout, unit);
      return true;
    } catch (TimeoutException e) {
      return false;
    } catch (ExecutionException e) {
      throw new IllegalStateException(e.getCause());
    }
  }

  @Override
  public int exitValue() {
    Integer code = exit.getNow(null);
    if (code == null) {
      throw new IllegalThreadStateException("process " + pid + " has not exited");
    }
    return code;
  }

  @Override
  public boolean isAlive() {
    return !exit.isDone();
  }

  @Override
  public void destroy() {
    handle.destroy();
  }

  @Override
  public Process destroyForcibly() {
    handle.destroyForcibly();
    return this;
  }

  @Override
  public boolean supportsNormalTermination() {
    return true;
  }

  @Override
  public long pid() {
    return pid;
  }

  @Override
  public ProcessHandle toHandle() {
    return handle;
  }

  @Override
  public CompletableFuture<Process> onExit() {
    return exit.thenApply(code -> this);
  }

  @Override
  public String toString() {
    return "SpawnedProcess[pid=" + pid + ", exitValue=" + exit.getNow(null) + "]";
  }
}

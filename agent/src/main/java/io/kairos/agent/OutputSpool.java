package io.kairos.agent;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A step process's output, as the agent keeps it: two threads copy the process's stdout and stderr
 * pipes into spool files the agent owns ({@code <dataDir>/spool/<key>/<local>.out}, {@code .err},
 * mode 0600), which srun reads back through the controller ({@link LogServer}). The agent reads the
 * pipes itself, as slurmstepd does, so the files are never the job's to replace and a read needs no
 * process of the job owner's.
 *
 * <p>A pipe ends when the process and every child holding it have exited; {@link #awaitDrained}
 * waits a bounded time for that, so a background child that keeps the pipe open cannot hold back
 * the task's exit (its later output still lands in the file).
 */
final class OutputSpool {
  private static final int BUFFER = 64 * 1024;

  private final Thread out;
  private final Thread err;
  private final AtomicLong bytes = new AtomicLong();

  private OutputSpool(Process process, Path stdout, Path stderr, String name) {
    this.out =
        Thread.ofVirtual().name(name + "-out").start(() -> copy(process.getInputStream(), stdout));
    this.err =
        Thread.ofVirtual().name(name + "-err").start(() -> copy(process.getErrorStream(), stderr));
  }

  /** Starts copying {@code process}'s pipes to {@code stdout} and {@code stderr}. */
  static OutputSpool start(Process process, Path stdout, Path stderr, String name) {
    return new OutputSpool(process, stdout, stderr, name);
  }

  /** Bytes copied so far, both streams. */
  long bytes() {
    return bytes.get();
  }

  /**
   * Waits, at most {@code max}, until both pipes have ended.
   *
   * @return whether they have
   */
  boolean awaitDrained(Duration max) {
    long deadline = System.nanoTime() + max.toNanos();
    for (Thread t : new Thread[] {out, err}) {
      long left = deadline - System.nanoTime();
      try {
        if (left <= 0 || !t.join(Duration.ofNanos(left))) {
          return false;
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    return true;
  }

  private void copy(InputStream in, Path file) {
    try (in;
        OutputStream sink =
            Files.newOutputStream(
                create(file),
                LinkOption.NOFOLLOW_LINKS,
                StandardOpenOption.WRITE,
                StandardOpenOption.APPEND)) {
      byte[] buffer = new byte[BUFFER];
      int n;
      while ((n = in.read(buffer)) >= 0) {
        sink.write(buffer, 0, n);
        sink.flush();
        bytes.addAndGet(n);
      }
    } catch (IOException e) {
      // The pipe broke with the process, or the spool went: nothing more to copy.
    }
  }

  private static Path create(Path file) throws IOException {
    if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
      Files.createFile(
          file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    }
    return file;
  }

  /**
   * Up to {@code limit} bytes of {@code file} from {@code offset}; empty when the file does not
   * exist (the process has written nothing yet). An offset past the end reads nothing.
   */
  static Optional<byte[]> read(Path file, long offset, int limit) throws IOException {
    try (FileChannel channel =
        FileChannel.open(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
      long size = channel.size();
      if (offset >= size) {
        return Optional.of(new byte[0]);
      }
      var buffer = ByteBuffer.allocate((int) Math.min(limit, size - offset));
      while (buffer.hasRemaining() && channel.read(buffer, offset + buffer.position()) > 0) {
        // keep reading
      }
      return Optional.of(java.util.Arrays.copyOf(buffer.array(), buffer.position()));
    } catch (NoSuchFileException e) {
      return Optional.empty();
    }
  }

  /** Deletes a step's spool directory and its files; true (gone already, or never made). */
  static boolean delete(Path spool) {
    try (var files = Files.list(spool)) {
      for (Path f : files.toList()) {
        Files.deleteIfExists(f);
      }
      Files.deleteIfExists(spool);
    } catch (IOException e) {
      // Gone already, or never made.
    }
    return true;
  }

  /** Removes the spool directories in {@code due} whose time has come, and forgets them. */
  static void deleteDue(
      java.util.Map<java.nio.file.Path, java.time.Instant> due, java.time.Instant now) {
    due.entrySet().removeIf(e -> !now.isBefore(e.getValue()) && delete(e.getKey()));
  }
}

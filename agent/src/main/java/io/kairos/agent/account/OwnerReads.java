package io.kairos.agent.account;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Reads a window of a task's output file for the log server, with the rights of the account the
 * task ran as, so the kernel decides what may be served: never a file the task's owner could not
 * read, and never through a symbolic link in the file's own name (whoever planted it).
 *
 * <ul>
 *   <li>{@link #asOwner}: the agent is root and the task ran as another account. The bytes come
 *       from {@code setpriv ... -- dd iflag=nofollow,nonblock} run as that account: {@code
 *       nofollow} refuses a symbolic link as the last component, {@code nonblock} keeps a FIFO from
 *       hanging the reader. One short process per request.
 *   <li>{@link #here}: the task ran as the agent's own account, which reads the file itself (the
 *       same rights), refusing a symbolic link and anything but a regular file the same way.
 * </ul>
 *
 * <p>To tell "at the end" from "past the end" without a size the owner might not be allowed to
 * learn, a read from offset N > 0 starts one byte early: that byte exists exactly when N is within
 * the file. And one byte more than asked says whether more follows.
 */
public final class OwnerReads {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  private OwnerReads() {}

  /** What a read found. */
  public sealed interface Result {
    /** Bytes from the offset; {@code atEnd}: nothing followed them when they were read. */
    record Bytes(byte[] data, boolean atEnd) implements Result {}

    /** The file does not exist (yet): the task has not opened its output. */
    record Missing() implements Result {}

    /** The offset is past the end of the file. */
    record PastEnd() implements Result {}

    /** Not served: the owner may not read it, it is a symbolic link, or not a regular file. */
    record Refused(String why) implements Result {}
  }

  /** Reads {@code limit} bytes of {@code file} from {@code offset} as {@code owner}. */
  public static Result asOwner(Account owner, Path file, long offset, int limit)
      throws IOException {
    long start = offset > 0 ? offset - 1 : 0;
    long count = limit + 1L + (offset > 0 ? 1 : 0);
    var argv = new ArrayList<>(Setpriv.as(owner));
    argv.addAll(
        List.of(
            Setpriv.binary("dd"),
            "if=" + file,
            "iflag=nofollow,nonblock,skip_bytes,count_bytes",
            "skip=" + start,
            "count=" + count,
            "status=none"));
    var builder =
        new ProcessBuilder(argv)
            .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
    builder.environment().clear();
    builder.environment().put("LC_ALL", "C");
    builder.environment().put("PATH", "/usr/bin:/bin");
    Process p = builder.start();
    var err = new AtomicReference<byte[]>(new byte[0]);
    Thread errReader = Thread.ofVirtual().start(() -> err.set(readUpTo(p.getErrorStream(), 4096)));
    byte[] out = readUpTo(p.getInputStream(), (int) count);
    try {
      if (!p.waitFor(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly();
        return new Result.Refused("reading " + file + " as " + owner.name() + " took too long");
      }
      errReader.join(TIMEOUT.toMillis());
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while reading " + file, e);
    }
    if (p.exitValue() != 0) {
      String text = new String(err.get(), StandardCharsets.UTF_8).strip();
      if (text.contains("No such file or directory")) {
        return new Result.Missing();
      }
      if (text.contains("Too many levels of symbolic links")) {
        return new Result.Refused(file + " is a symbolic link: not served");
      }
      if (text.contains("Permission denied")) {
        return new Result.Refused(owner.name() + " may not read " + file + ": not served");
      }
      return new Result.Refused(
          "cannot read " + file + " as " + owner.name() + ": " + firstLine(text));
    }
    return window(out, offset, limit);
  }

  /** Reads {@code limit} bytes of {@code file} from {@code offset} with this process's rights. */
  public static Result here(Path file, long offset, int limit) throws IOException {
    BasicFileAttributes attributes;
    try {
      attributes = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
    } catch (NoSuchFileException e) {
      return new Result.Missing();
    }
    if (attributes.isSymbolicLink()) {
      return new Result.Refused(file + " is a symbolic link: not served");
    }
    if (!attributes.isRegularFile()) {
      return new Result.Refused(file + " is not a regular file: not served");
    }
    long start = offset > 0 ? offset - 1 : 0;
    int count = limit + 1 + (offset > 0 ? 1 : 0);
    ByteBuffer buffer = ByteBuffer.allocate(count);
    try (FileChannel channel =
        FileChannel.open(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
      while (buffer.hasRemaining() && channel.read(buffer, start + buffer.position()) > 0) {
        // a positional read may return less than asked: read until full or at the end
      }
    } catch (NoSuchFileException e) {
      return new Result.Missing();
    } catch (FileSystemException e) {
      return new Result.Refused("cannot read " + file + ": " + e.getReason());
    }
    return window(Arrays.copyOf(buffer.array(), buffer.position()), offset, limit);
  }

  /** The bytes read from one before {@code offset} (when > 0), cut to {@code limit}. */
  static Result window(byte[] read, long offset, int limit) {
    byte[] data = read;
    if (offset > 0) {
      if (read.length == 0) {
        return new Result.PastEnd();
      }
      data = Arrays.copyOfRange(read, 1, read.length);
    }
    if (data.length > limit) {
      return new Result.Bytes(Arrays.copyOf(data, limit), false);
    }
    return new Result.Bytes(data, true);
  }

  private static byte[] readUpTo(InputStream in, int max) {
    try (in) {
      var out = new ByteArrayOutputStream();
      byte[] chunk = new byte[8192];
      int n;
      while ((n = in.read(chunk)) > 0) {
        if (out.size() < max) {
          out.write(chunk, 0, Math.min(n, max - out.size()));
        }
      }
      return out.toByteArray();
    } catch (IOException e) {
      return new byte[0];
    }
  }

  private static String firstLine(String text) {
    int nl = text.indexOf('\n');
    return nl < 0 ? text : text.substring(0, nl);
  }
}

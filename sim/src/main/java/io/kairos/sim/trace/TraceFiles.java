package io.kairos.sim.trace;

import java.io.BufferedInputStream;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.zip.GZIPInputStream;

/** Opens trace files, plain or gzip (detected by the magic bytes), as buffered text. */
final class TraceFiles {
  private static final int GZIP_BUFFER = 64 * 1024;
  private static final int CHAR_BUFFER = 256 * 1024;

  private TraceFiles() {}

  /**
   * Opens {@code file} for reading lines; gunzips it when it starts with 0x1f 0x8b.
   *
   * @throws TraceFormatException (line 0) when the file cannot be opened
   */
  static BufferedReader open(Path file, String source) {
    return open(file, source, StandardCharsets.UTF_8);
  }

  /**
   * {@link #open(Path, String)} with a charset: SWF is ASCII numbers, and ISO-8859-1 decodes it
   * without validation (every byte is a char), which is measurably faster on large traces.
   */
  static BufferedReader open(Path file, String source, java.nio.charset.Charset charset) {
    InputStream raw = null;
    try {
      if (Files.isDirectory(file)) {
        throw new TraceFormatException(source, 0, "", "cannot read file: it is a directory");
      }
      raw = new BufferedInputStream(Files.newInputStream(file), GZIP_BUFFER);
      raw.mark(2);
      int b0 = raw.read();
      int b1 = raw.read();
      raw.reset();
      InputStream in = b0 == 0x1f && b1 == 0x8b ? new GZIPInputStream(raw, GZIP_BUFFER) : raw;
      return new BufferedReader(new InputStreamReader(in, charset), CHAR_BUFFER);
    } catch (IOException e) {
      closeQuietly(raw);
      throw cannotRead(source, e);
    }
  }

  /** The exception to throw when reading {@code source} failed with {@code e}. */
  static TraceFormatException cannotRead(String source, IOException e) {
    return new TraceFormatException(source, 0, "", "cannot read file: " + reason(e));
  }

  private static String reason(IOException e) {
    if (e instanceof NoSuchFileException) {
      return "no such file";
    }
    if (e instanceof AccessDeniedException) {
      return "permission denied";
    }
    var message = e.getMessage();
    return message == null || message.isBlank() ? e.getClass().getSimpleName() : message;
  }

  private static void closeQuietly(InputStream in) {
    if (in == null) {
      return;
    }
    try {
      in.close();
    } catch (IOException ignored) {
      // already failing: the first error is the one worth reporting
    }
  }
}

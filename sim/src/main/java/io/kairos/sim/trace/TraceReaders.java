package io.kairos.sim.trace;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Reads a trace file in any supported format: the entry point for {@code --trace} and {@code
 * --format}.
 *
 * <p>{@code auto} looks at the start of the file (after gunzipping it, when it is gzip): lines
 * starting with {@code ;}, or a first line of whitespace-separated numbers, mean SWF; a
 * comma-separated header with {@code timestamp} and {@code num_gpus} columns means Philly; one with
 * a {@code submit_s} column means Kairos CSV; one with {@code application} and {@code num_replicas}
 * columns means a Pollux/Sia workload; a {@code |}-separated header with a {@code JobID} column
 * means sacct. Anything else is an error that asks for {@code --format}.
 */
public final class TraceReaders {
  /** The format that detects the others. */
  public static final String AUTO = "auto";

  /** The values {@code --format} accepts. */
  public static final List<String> FORMATS =
      List.of(
          AUTO,
          SwfReader.FORMAT,
          PhillyReader.FORMAT,
          KairosCsvReader.FORMAT,
          SacctReader.FORMAT,
          SiaWorkloadReader.FORMAT);

  private static final String FORMAT_HINT = "use --format swf|philly|kairos-csv|sacct|sia-workload";

  /** Lines looked at, at most, before detection gives up. */
  private static final int DETECT_LINES = 10_000;

  private TraceReaders() {}

  /**
   * Reads {@code file}.
   *
   * @param file the trace file, plain or gzip; {@link Trace#source()} is this path as given
   * @param format {@code auto}, {@code swf}, {@code philly}, {@code kairos-csv} or {@code sacct}
   * @param mode where time limits come from (Philly files always use run times)
   * @return the trace; its job list may be empty, which the caller judges
   * @throws TraceFormatException when the file cannot be read, its format cannot be told or it is
   *     malformed, or {@code format} is not one of the above
   */
  public static Trace read(Path file, String format, EstimateMode mode) {
    var name = format.strip().toLowerCase(Locale.ROOT);
    if (!FORMATS.contains(name)) {
      throw new TraceFormatException(
          file.toString(),
          0,
          "",
          "unknown format '" + format + "': use --format " + String.join("|", FORMATS));
    }
    if (name.equals(AUTO)) {
      name = detect(file);
    }
    return switch (name) {
      case SwfReader.FORMAT -> SwfReader.read(file, mode);
      case PhillyReader.FORMAT -> PhillyReader.read(file, mode);
      case SacctReader.FORMAT -> SacctReader.read(file, mode);
      case SiaWorkloadReader.FORMAT -> SiaWorkloadReader.read(file);
      default -> KairosCsvReader.read(file, mode);
    };
  }

  /**
   * Tells the format of {@code file} from its first lines.
   *
   * @return {@code swf}, {@code philly}, {@code kairos-csv} or {@code sacct}
   * @throws TraceFormatException when the file cannot be read or its format cannot be told
   */
  public static String detect(Path file) {
    var source = file.toString();
    try (var in = TraceFiles.open(file, source)) {
      String line;
      for (int n = 0; n < DETECT_LINES && (line = in.readLine()) != null; n++) {
        var text = line.strip();
        if (text.isEmpty() || text.startsWith("#")) {
          continue;
        }
        if (text.startsWith(";")) {
          return SwfReader.FORMAT;
        }
        var format = classify(text);
        if (format != null) {
          return format;
        }
        var shown = text.length() > 60 ? text.substring(0, 60) + "..." : text;
        throw new TraceFormatException(
            source, 0, "", "cannot tell the trace format from '" + shown + "': " + FORMAT_HINT);
      }
    } catch (IOException e) {
      throw TraceFiles.cannotRead(source, e);
    }
    throw new TraceFormatException(
        source, 0, "", "cannot tell the trace format: the file has no data lines; " + FORMAT_HINT);
  }

  /** The format whose first data line (or header) {@code text} is, or null. */
  private static String classify(String text) {
    // Before the comma test: sacct lines hold commas too (in the TRES columns).
    if (text.indexOf('|') >= 0) {
      for (var column : text.split("\\|", -1)) {
        if (column.strip().equalsIgnoreCase(SacctColumns.JOB_ID)) {
          return SacctReader.FORMAT;
        }
      }
      return null;
    }
    if (text.indexOf(',') >= 0) {
      var csv = new CsvLine();
      csv.split(text);
      boolean timestamp = false;
      boolean gpus = false;
      boolean application = false;
      boolean replicas = false;
      for (int i = 0; i < csv.count(); i++) {
        var column = csv.text(i);
        timestamp |= column.equals(PhillyReader.TIMESTAMP);
        gpus |= column.equals(PhillyReader.NUM_GPUS);
        application |= column.equals(SiaWorkloadReader.APPLICATION);
        replicas |= column.equals(SiaWorkloadReader.REPLICAS);
        if (column.equals(KairosCsvReader.SUBMIT)) {
          return KairosCsvReader.FORMAT;
        }
      }
      if (application && replicas) {
        return SiaWorkloadReader.FORMAT;
      }
      return timestamp && gpus ? PhillyReader.FORMAT : null;
    }
    int tokens = 0;
    int i = 0;
    int length = text.length();
    while (i < length) {
      int start = i;
      while (i < length && text.charAt(i) > ' ') {
        i++;
      }
      if (Double.isNaN(TraceNumbers.decimal(text, start, i))) {
        return null;
      }
      tokens++;
      while (i < length && text.charAt(i) <= ' ') {
        i++;
      }
    }
    return tokens >= 2 ? SwfReader.FORMAT : null;
  }
}

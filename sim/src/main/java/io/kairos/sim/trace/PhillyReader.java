package io.kairos.sim.trace;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.YearMonth;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;

/**
 * Reads the Philly job file ({@code philly/pollux_philly_jobs.csv.gz}, the Pollux authors'
 * processing of the Microsoft Philly trace), plain or gzip-compressed.
 *
 * <p>The first line is the header; the columns are found by name, so their order does not matter:
 * {@code timestamp} ({@code YYYY-MM-DD HH:MM:SS}, no time zone), {@code duration} (run time in
 * seconds, may have a fraction), {@code num_gpus} and {@code cluster} (the hashed virtual cluster
 * id) are required; others ({@code gpu_time}) are ignored. Blank lines are ignored.
 *
 * <p>The rules:
 *
 * <ul>
 *   <li>The rows are not in time order; jobs are sorted by timestamp (ties keep file order) and
 *       numbered 1, 2, ... in that order.
 *   <li>Submit times are seconds since the earliest timestamp in the file, so the first job submits
 *       at 0. Only differences matter, so the time zone does not.
 *   <li>Run times are rounded up to whole seconds, at least 1.
 *   <li>The file has no runtime estimates: every job's time limit is its run time ({@link
 *       Trace#estimatesFromRuntime()} is true, with a note), whatever the {@link EstimateMode}.
 *   <li>The cluster is the queue; there is no user (""), the priority is 0 and the GPUs may be
 *       packed anywhere ({@code gpusPerNode} = 0).
 * </ul>
 *
 * <p>A missing column or a bad value stops the reading with a {@link TraceFormatException} that
 * names the line and the column.
 */
public final class PhillyReader {
  /** The format name, as in {@link Trace#format()} and {@code --format}. */
  public static final String FORMAT = "philly";

  static final String TIMESTAMP = "timestamp";
  static final String DURATION = "duration";
  static final String NUM_GPUS = "num_gpus";
  static final String CLUSTER = "cluster";
  private static final List<String> REQUIRED = List.of(TIMESTAMP, DURATION, NUM_GPUS, CLUSTER);
  private static final int TIMESTAMP_LENGTH = "YYYY-MM-DD HH:MM:SS".length();

  private PhillyReader() {}

  /**
   * Reads a Philly job file.
   *
   * @param file the file, plain or gzip
   * @param mode accepted for symmetry with the other readers; the file has no estimates, so run
   *     times are always the time limits
   * @throws TraceFormatException when the file cannot be read, a column is missing or a value is
   *     bad
   */
  public static Trace read(Path file, EstimateMode mode) {
    var source = file.toString();
    try (var in = TraceFiles.open(file, source)) {
      return read(in, source);
    } catch (IOException e) {
      throw TraceFiles.cannotRead(source, e);
    }
  }

  /** One row before sorting: the absolute time (seconds, UTC arithmetic) and its values. */
  private record Row(long epochSec, int order, long durationSec, int gpus, String queue) {}

  static Trace read(BufferedReader in, String source) throws IOException {
    var csv = new CsvLine();
    CsvHeader header = null;
    int timestampAt = -1;
    int durationAt = -1;
    int gpusAt = -1;
    int clusterAt = -1;
    var queues = new HashMap<String, String>();
    var rows = new ArrayList<Row>(1 << 12);
    long lineNumber = 0;
    String line;
    while ((line = in.readLine()) != null) {
      lineNumber++;
      if (line.isBlank()) {
        continue;
      }
      int count = csv.split(line);
      if (header == null) {
        header = CsvHeader.parse(csv, source, lineNumber, REQUIRED, null);
        timestampAt = header.position(TIMESTAMP);
        durationAt = header.position(DURATION);
        gpusAt = header.position(NUM_GPUS);
        clusterAt = header.position(CLUSTER);
        continue;
      }
      if (count != header.width()) {
        throw new TraceFormatException(
            source,
            lineNumber,
            "",
            "expected "
                + header.width()
                + " comma-separated values (as in the header), got "
                + count);
      }
      long epochSec = timestamp(csv, timestampAt, source, lineNumber);
      double duration = csv.decimal(durationAt);
      if (!(duration >= 0)) {
        throw new TraceFormatException(
            source,
            lineNumber,
            DURATION,
            "expected a number of seconds >= 0, got '" + csv.text(durationAt) + "'");
      }
      double gpus = csv.decimal(gpusAt);
      if (!(gpus >= 1 && TraceNumbers.isInt(gpus))) {
        throw new TraceFormatException(
            source,
            lineNumber,
            NUM_GPUS,
            "expected a whole number >= 1, got '" + csv.text(gpusAt) + "'");
      }
      String queue = "default";
      if (!csv.isEmpty(clusterAt)) {
        var name = csv.text(clusterAt);
        queue = queues.computeIfAbsent(name, n -> n);
      }
      long durationSec = Math.max(1, TraceNumbers.ceilSeconds(duration));
      rows.add(new Row(epochSec, rows.size(), durationSec, (int) gpus, queue));
    }
    if (header == null) {
      throw new TraceFormatException(
          source,
          0,
          "",
          "the file is empty: expected a header line with the columns "
              + String.join(",", REQUIRED));
    }
    var sorted = rows.toArray(new Row[0]);
    Arrays.sort(
        sorted,
        (a, b) ->
            a.epochSec() != b.epochSec()
                ? Long.compare(a.epochSec(), b.epochSec())
                : Integer.compare(a.order(), b.order()));
    var jobs = new ArrayList<TraceJob>(sorted.length);
    long origin = sorted.length == 0 ? 0 : sorted[0].epochSec();
    for (int i = 0; i < sorted.length; i++) {
      var row = sorted[i];
      jobs.add(
          new TraceJob(
              i + 1,
              row.epochSec() - origin,
              row.gpus(),
              row.durationSec(),
              row.durationSec(),
              "",
              row.queue(),
              0,
              0));
    }
    var notes = List.of("trace has no estimates: run times used as time limits");
    return new Trace(source, FORMAT, jobs, rows.size(), 0, true, notes);
  }

  /** Parses {@code YYYY-MM-DD HH:MM:SS} into seconds since 1970-01-01 00:00:00 (no zone). */
  private static long timestamp(CsvLine csv, int field, String source, long lineNumber) {
    String s = csv.line();
    int at = csv.start(field);
    if (csv.end(field) - at == TIMESTAMP_LENGTH
        && s.charAt(at + 4) == '-'
        && s.charAt(at + 7) == '-'
        && s.charAt(at + 10) == ' '
        && s.charAt(at + 13) == ':'
        && s.charAt(at + 16) == ':') {
      int year = digits(s, at, 4);
      int month = digits(s, at + 5, 2);
      int day = digits(s, at + 8, 2);
      int hour = digits(s, at + 11, 2);
      int minute = digits(s, at + 14, 2);
      int second = digits(s, at + 17, 2);
      if (year >= 0
          && month >= 1
          && month <= 12
          && day >= 1
          && day <= YearMonth.of(year, month).lengthOfMonth()
          && hour >= 0
          && hour <= 23
          && minute >= 0
          && minute <= 59
          && second >= 0
          && second <= 59) {
        long days = LocalDate.of(year, month, day).toEpochDay();
        return days * 86_400L + hour * 3_600L + minute * 60L + second;
      }
    }
    throw new TraceFormatException(
        source,
        lineNumber,
        TIMESTAMP,
        "expected a date and time like 2017-09-04 10:30:41, got '" + csv.text(field) + "'");
  }

  /** The value of {@code n} decimal digits at {@code at}, or -1 when one is not a digit. */
  private static int digits(String s, int at, int n) {
    int value = 0;
    for (int i = at; i < at + n; i++) {
      int d = s.charAt(i) - '0';
      if (d < 0 || d > 9) {
        return -1;
      }
      value = value * 10 + d;
    }
    return value;
  }
}

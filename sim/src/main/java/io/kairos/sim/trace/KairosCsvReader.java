package io.kairos.sim.trace;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;

/**
 * Reads Kairos' own trace CSV, plain or gzip-compressed.
 *
 * <p>The first line that is not blank or a comment ({@code #}) is the header. Its columns, in any
 * order, are {@code id}, {@code submit_s}, {@code gpus}, {@code duration_s} (required) and {@code
 * time_limit_s}, {@code user}, {@code queue}, {@code priority}, {@code gpus_per_node}, {@code
 * depends_on}, {@code think_s} (optional: the column may be absent, or a row may leave it empty).
 * No other column is allowed. Values are separated by commas, without quoting; spaces around a
 * value are ignored.
 *
 * <p>The rules:
 *
 * <ul>
 *   <li>{@code id} is a positive whole number, unique in the file.
 *   <li>{@code submit_s} (seconds) is at least 0; {@code gpus}, {@code duration_s} and {@code
 *       time_limit_s} are at least 1.
 *   <li>Defaults for empty or absent values: {@code time_limit_s} = {@code duration_s}, {@code
 *       user} "", {@code queue} "default", {@code priority} 0, {@code gpus_per_node} 0.
 *   <li>A job whose time limit is below its duration gets its duration as limit (noted in the
 *       trace). With {@link EstimateMode#ACTUAL} every job's limit is its duration.
 *   <li>When no row has a time limit, {@link Trace#estimatesFromRuntime()} is true, with a note.
 *   <li>{@code gpus_per_node} is at least 0; when above 0 the job needs {@code gpus /
 *       gpus_per_node} nodes' worth of GPUs, so it must divide {@code gpus}.
 *   <li>{@code depends_on} is the id of a job this one waits for (0 or empty for none): the
 *       simulator submits it {@code think_s} seconds (default 0) after that job ends, not at {@code
 *       submit_s} (SWF's preceding job and think time).
 *   <li>Rows may come in any order; jobs are sorted by submit time, then id.
 * </ul>
 *
 * <p>A bad header or value stops the reading with a {@link TraceFormatException} that names the
 * line and the column. {@link KairosCsvWriter} writes this format.
 */
public final class KairosCsvReader {
  /** The format name, as in {@link Trace#format()} and {@code --format}. */
  public static final String FORMAT = "kairos-csv";

  static final String ID = "id";
  static final String SUBMIT = "submit_s";
  static final String GPUS = "gpus";
  static final String DURATION = "duration_s";
  static final String TIME_LIMIT = "time_limit_s";
  static final String USER = "user";
  static final String QUEUE = "queue";
  static final String PRIORITY = "priority";
  static final String GPUS_PER_NODE = "gpus_per_node";
  static final String DEPENDS_ON = "depends_on";
  static final String THINK = "think_s";

  /** All columns, in the order {@link KairosCsvWriter} writes them. */
  static final List<String> COLUMNS =
      List.of(ID, SUBMIT, GPUS, DURATION, TIME_LIMIT, USER, QUEUE, PRIORITY, GPUS_PER_NODE);

  /** The columns that carry dependencies, written only for a trace that has some. */
  static final List<String> DEPENDENCY_COLUMNS = List.of(DEPENDS_ON, THINK);

  private static final List<String> ALLOWED =
      java.util.stream.Stream.concat(COLUMNS.stream(), DEPENDENCY_COLUMNS.stream()).toList();

  private static final List<String> REQUIRED = List.of(ID, SUBMIT, GPUS, DURATION);

  private KairosCsvReader() {}

  /**
   * Reads a Kairos trace CSV.
   *
   * @param file the file, plain or gzip
   * @param mode where time limits come from
   * @throws TraceFormatException when the file cannot be read or the header or a value is bad
   */
  public static Trace read(Path file, EstimateMode mode) {
    var source = file.toString();
    try (var in = TraceFiles.open(file, source)) {
      return read(in, source, mode);
    } catch (IOException e) {
      throw TraceFiles.cannotRead(source, e);
    }
  }

  static Trace read(BufferedReader in, String source, EstimateMode mode) throws IOException {
    var csv = new CsvLine();
    Columns columns = null;
    var jobs = new ArrayList<TraceJob>();
    var idLines = new HashMap<Long, Long>();
    var strings = new HashMap<String, String>();
    int withLimit = 0;
    int raised = 0;
    long lineNumber = 0;
    String line;
    while ((line = in.readLine()) != null) {
      lineNumber++;
      if (line.isBlank() || line.strip().startsWith("#")) {
        continue;
      }
      int count = csv.split(line);
      if (columns == null) {
        columns = new Columns(CsvHeader.parse(csv, source, lineNumber, REQUIRED, ALLOWED));
        continue;
      }
      if (count != columns.width) {
        throw new TraceFormatException(
            source,
            lineNumber,
            "",
            "expected "
                + columns.width
                + " comma-separated values (as in the header), got "
                + count);
      }
      var row = new Row(csv, source, lineNumber);
      long id = row.required(columns.id, ID, 1, Long.MAX_VALUE);
      Long earlier = idLines.putIfAbsent(id, lineNumber);
      if (earlier != null) {
        throw new TraceFormatException(
            source, lineNumber, ID, "id " + id + " was already used on line " + earlier);
      }
      long submit = row.required(columns.submit, SUBMIT, 0, Long.MAX_VALUE);
      int gpus = (int) row.required(columns.gpus, GPUS, 1, Integer.MAX_VALUE);
      long duration = row.required(columns.duration, DURATION, 1, Long.MAX_VALUE);
      long limit = row.optional(columns.timeLimit, TIME_LIMIT, 1, Long.MAX_VALUE, 0);
      if (limit > 0) {
        withLimit++;
      }
      if (mode == EstimateMode.ACTUAL || limit == 0) {
        limit = duration;
      } else if (limit < duration) {
        limit = duration;
        raised++;
      }
      int priority =
          (int) row.optional(columns.priority, PRIORITY, Integer.MIN_VALUE, Integer.MAX_VALUE, 0);
      int perNode = (int) row.optional(columns.gpusPerNode, GPUS_PER_NODE, 0, Integer.MAX_VALUE, 0);
      if (perNode > 0 && gpus % perNode != 0) {
        throw new TraceFormatException(
            source,
            lineNumber,
            GPUS_PER_NODE,
            "gpus "
                + gpus
                + " is not a multiple of gpus_per_node "
                + perNode
                + ": gpus must be a multiple of gpus_per_node");
      }
      var user = row.text(columns.user, "", strings);
      var queue = row.text(columns.queue, "default", strings);
      long dependsOn = row.optional(columns.dependsOn, DEPENDS_ON, 0, Long.MAX_VALUE, 0);
      long think = row.optional(columns.think, THINK, 0, Long.MAX_VALUE, 0);
      jobs.add(
          new TraceJob(
              id,
              submit,
              gpus,
              duration,
              limit,
              user,
              queue,
              priority,
              perNode,
              dependsOn,
              dependsOn > 0 ? think : 0));
    }
    jobs.sort(Comparator.comparingLong(TraceJob::submitSec).thenComparingLong(TraceJob::id));

    var estimates = EstimateNotes.of(mode, jobs.size(), withLimit, raised, "time limit");
    return new Trace(
        source, FORMAT, jobs, jobs.size(), 0, estimates.fromRuntime(), estimates.notes());
  }

  /** Where each column is (-1 when the header lacks it). */
  private static final class Columns {
    final int width;
    final int id;
    final int submit;
    final int gpus;
    final int duration;
    final int timeLimit;
    final int user;
    final int queue;
    final int priority;
    final int gpusPerNode;
    final int dependsOn;
    final int think;

    Columns(CsvHeader header) {
      width = header.width();
      id = header.position(ID);
      submit = header.position(SUBMIT);
      gpus = header.position(GPUS);
      duration = header.position(DURATION);
      timeLimit = header.position(TIME_LIMIT);
      user = header.position(USER);
      queue = header.position(QUEUE);
      priority = header.position(PRIORITY);
      gpusPerNode = header.position(GPUS_PER_NODE);
      dependsOn = header.position(DEPENDS_ON);
      think = header.position(THINK);
    }
  }

  /** The values of one data line, with the checks that name the line and column. */
  private record Row(CsvLine csv, String source, long lineNumber) {
    /** The whole number in required column {@code at}, between {@code min} and {@code max}. */
    long required(int at, String name, long min, long max) {
      if (csv.isEmpty(at)) {
        throw new TraceFormatException(source, lineNumber, name, "a value is required");
      }
      return number(at, name, min, max);
    }

    /** Like {@link #required}, but {@code absent} when the column is absent or empty. */
    long optional(int at, String name, long min, long max, long absent) {
      return at < 0 || csv.isEmpty(at) ? absent : number(at, name, min, max);
    }

    private long number(int at, String name, long min, long max) {
      var text = csv.text(at);
      long value;
      try {
        value = Long.parseLong(text);
      } catch (NumberFormatException e) {
        throw new TraceFormatException(
            source, lineNumber, name, "expected a whole number, got '" + text + "'");
      }
      if (value < min) {
        throw new TraceFormatException(
            source, lineNumber, name, "expected a whole number >= " + min + ", got " + value);
      }
      if (value > max) {
        throw new TraceFormatException(
            source, lineNumber, name, "expected a whole number <= " + max + ", got " + value);
      }
      return value;
    }

    /** The text in column {@code at}, or {@code absent} when absent or empty. */
    String text(int at, String absent, HashMap<String, String> strings) {
      if (at < 0 || csv.isEmpty(at)) {
        return absent;
      }
      return strings.computeIfAbsent(csv.text(at), s -> s);
    }
  }
}

package io.kairos.sim.trace;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads a Standard Workload Format file (the Parallel Workloads Archive's {@code .swf}), plain or
 * gzip-compressed (recognised by its first two bytes, whatever the file is called).
 *
 * <p>Lines starting with {@code ;} are the header and comments; blank lines are ignored. Every
 * other line is one job: at least 9 (normally 18) whitespace-separated numbers, whole or decimal,
 * with -1 for a missing value. The fields used are 1 job id, 2 submit time, 4 run time, 5 allocated
 * processors, 8 requested processors, 9 requested time, 12 user id, 15 queue, 17 preceding job and
 * 18 think time.
 *
 * <p>The rules:
 *
 * <ul>
 *   <li>A job counts when its run time is above 0 and it has processors: the allocated processors
 *       (field 5), or the requested processors (field 8) when field 5 is 0 or less. Other rows
 *       (cancelled before they started, for instance) are dropped and counted in {@link
 *       Trace#rowsDropped()}.
 *   <li>Each processor is one GPU of the simulated cluster: {@code gpus} = processors, and the GPUs
 *       may be packed anywhere ({@code gpusPerNode} = 0).
 *   <li>The time limit is the requested time (field 9) when it is above 0, else the run time. A job
 *       that ran longer than its requested time gets its run time as limit (noted in the trace).
 *       With {@link EstimateMode#ACTUAL} every job's limit is its run time.
 *   <li>When no job that counts has a requested time (the Lublin model files, NASA iPSC), run times
 *       are the time limits: {@link Trace#estimatesFromRuntime()} is true, with a note.
 *   <li>The user is {@code u<field 12>} ("" when -1), the queue {@code q<field 15>} ("default" when
 *       0 or less), the priority 0.
 *   <li>Fractional times are rounded up to whole seconds. Ids, processors, user and queue must be
 *       whole numbers; ids must be positive and unique among the jobs that count.
 *   <li>A preceding job (field 17) above 0 makes the job wait for it: the simulator submits it
 *       think time (field 18, 0 when below 0) after that job ends, not at its own submit time.
 *   <li>Jobs are sorted by submit time, then id.
 * </ul>
 *
 * <p>A line with a field that is not a number, fewer than 9 fields or a negative submit time stops
 * the reading with a {@link TraceFormatException} that names the line and the field.
 */
public final class SwfReader {
  /** The format name, as in {@link Trace#format()} and {@code --format}. */
  public static final String FORMAT = "swf";

  private static final int MIN_FIELDS = 9;
  private static final int FIELDS = 18;
  private static final String[] FIELD_NAMES = {
    "job id",
    "submit time",
    "wait time",
    "run time",
    "allocated processors",
    "average CPU time",
    "used memory",
    "requested processors",
    "requested time",
    "requested memory",
    "status",
    "user id",
    "group id",
    "executable",
    "queue",
    "partition",
    "preceding job",
    "think time"
  };
  private static final int ID = 0;
  private static final int SUBMIT = 1;
  private static final int RUN = 3;
  private static final int ALLOCATED = 4;
  private static final int REQUESTED_PROCS = 7;
  private static final int REQUESTED_TIME = 8;
  private static final int USER = 11;
  private static final int QUEUE = 14;
  private static final int PRECEDING = 16;
  private static final int THINK = 17;

  private SwfReader() {}

  /**
   * Reads an SWF file.
   *
   * @param file the file, plain or gzip
   * @param mode where time limits come from
   * @throws TraceFormatException when the file cannot be read or a line is malformed
   */
  public static Trace read(Path file, EstimateMode mode) {
    var source = file.toString();
    try (var in = TraceFiles.open(file, source, java.nio.charset.StandardCharsets.ISO_8859_1)) {
      return read(in, source, mode);
    } catch (IOException e) {
      throw TraceFiles.cannotRead(source, e);
    }
  }

  /** The name of field {@code index} (0-based) as error messages show it. */
  static String fieldName(int index) {
    var number = "field " + (index + 1);
    return index < FIELDS ? FIELD_NAMES[index] + " (" + number + ")" : number;
  }

  static Trace read(BufferedReader in, String source, EstimateMode mode) throws IOException {
    var values = new double[FIELDS];
    var jobs = new ArrayList<TraceJob>(1 << 12);
    var jobLines = new long[1 << 12];
    var users = new HashMap<Long, String>();
    var queues = new HashMap<Long, String>();
    int rowsRead = 0;
    int rowsDropped = 0;
    int withRequest = 0;
    int raised = 0;
    long lineNumber = 0;
    String line;
    while ((line = in.readLine()) != null) {
      lineNumber++;
      int length = line.length();
      int i = skipBlanks(line, 0);
      if (i == length || line.charAt(i) == ';') {
        continue;
      }
      rowsRead++;
      int count = 0;
      while (i < length) {
        int start = i;
        while (i < length && line.charAt(i) > ' ') {
          i++;
        }
        double value = TraceNumbers.decimal(line, start, i);
        if (Double.isNaN(value)) {
          throw new TraceFormatException(
              source,
              lineNumber,
              fieldName(count),
              "expected a number, got '" + line.substring(start, i) + "'");
        }
        if (count < FIELDS) {
          values[count] = value;
        }
        count++;
        i = skipBlanks(line, i);
      }
      if (count < MIN_FIELDS) {
        throw new TraceFormatException(
            source,
            lineNumber,
            "",
            "expected at least "
                + MIN_FIELDS
                + " whitespace-separated numbers (SWF has "
                + FIELDS
                + " fields), got "
                + count);
      }
      for (int k = count; k < FIELDS; k++) {
        values[k] = -1;
      }
      if (values[SUBMIT] < 0) {
        throw bad(source, lineNumber, line, SUBMIT, "expected a time >= 0");
      }
      int procField = values[ALLOCATED] > 0 ? ALLOCATED : REQUESTED_PROCS;
      double procs = values[procField];
      if (!(values[RUN] > 0 && procs > 0)) {
        rowsDropped++;
        continue;
      }
      if (!TraceNumbers.isInt(procs)) {
        throw bad(source, lineNumber, line, procField, "expected a whole number of processors");
      }
      double id = values[ID];
      if (!(id > 0 && TraceNumbers.isWhole(id))) {
        throw bad(source, lineNumber, line, ID, "expected a positive whole number");
      }
      long runSec = TraceNumbers.ceilSeconds(values[RUN]);
      long limitSec = runSec;
      if (mode == EstimateMode.REQUESTED) {
        if (values[REQUESTED_TIME] > 0) {
          withRequest++;
          limitSec = TraceNumbers.ceilSeconds(values[REQUESTED_TIME]);
          if (limitSec < runSec) {
            limitSec = runSec;
            raised++;
          }
        }
      }
      var user = label(source, lineNumber, line, values, USER, "u", "", users, -1);
      var queue = label(source, lineNumber, line, values, QUEUE, "q", "default", queues, 0);
      if (jobs.size() == jobLines.length) {
        jobLines = Arrays.copyOf(jobLines, jobLines.length * 2);
      }
      jobLines[jobs.size()] = lineNumber;
      jobs.add(
          new TraceJob(
              (long) id,
              TraceNumbers.ceilSeconds(values[SUBMIT]),
              (int) procs,
              runSec,
              limitSec,
              user,
              queue,
              0,
              0,
              values[PRECEDING] > 0 && TraceNumbers.isWhole(values[PRECEDING])
                  ? (long) values[PRECEDING]
                  : 0,
              values[PRECEDING] > 0 && values[THINK] > 0
                  ? TraceNumbers.ceilSeconds(values[THINK])
                  : 0));
    }
    checkUniqueIds(source, jobs, jobLines);
    jobs.sort(Comparator.comparingLong(TraceJob::submitSec).thenComparingLong(TraceJob::id));

    var estimates = EstimateNotes.of(mode, jobs.size(), withRequest, raised, "requested time");
    return new Trace(
        source, FORMAT, jobs, rowsRead, rowsDropped, estimates.fromRuntime(), estimates.notes());
  }

  /** "u12" for user 12: {@code prefix} and the field's value, or {@code absent} at or below. */
  private static String label(
      String source,
      long lineNumber,
      String line,
      double[] values,
      int field,
      String prefix,
      String absent,
      Map<Long, String> cache,
      double absentAtOrBelow) {
    double value = values[field];
    if (value <= absentAtOrBelow) {
      return absent;
    }
    if (!TraceNumbers.isWhole(value)) {
      throw bad(source, lineNumber, line, field, "expected a whole number");
    }
    return cache.computeIfAbsent((long) value, v -> prefix + v);
  }

  private static void checkUniqueIds(String source, List<TraceJob> jobs, long[] lines) {
    var ids = new long[jobs.size()];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = jobs.get(i).id();
    }
    Arrays.sort(ids);
    for (int i = 1; i < ids.length; i++) {
      if (ids[i] == ids[i - 1]) {
        long duplicate = ids[i];
        long first = -1;
        for (int j = 0; j < jobs.size(); j++) {
          if (jobs.get(j).id() != duplicate) {
            continue;
          }
          if (first < 0) {
            first = lines[j];
          } else {
            throw new TraceFormatException(
                source,
                lines[j],
                fieldName(ID),
                "job id " + duplicate + " was already used on line " + first);
          }
        }
      }
    }
  }

  private static TraceFormatException bad(
      String source, long lineNumber, String line, int field, String expected) {
    return new TraceFormatException(
        source, lineNumber, fieldName(field), expected + ", got '" + token(line, field) + "'");
  }

  /** The text of field {@code field} (0-based) of {@code line}. */
  private static String token(String line, int field) {
    int length = line.length();
    int i = skipBlanks(line, 0);
    for (int n = 0; i < length; n++) {
      int start = i;
      while (i < length && line.charAt(i) > ' ') {
        i++;
      }
      if (n == field) {
        return line.substring(start, i);
      }
      i = skipBlanks(line, i);
    }
    return "-1";
  }

  private static int skipBlanks(String line, int from) {
    int i = from;
    while (i < line.length() && line.charAt(i) <= ' ') {
      i++;
    }
    return i;
  }
}

package io.kairos.sim.trace;

import static io.kairos.sim.trace.SacctColumns.ALLOC_TRES;
import static io.kairos.sim.trace.SacctColumns.ELAPSED;
import static io.kairos.sim.trace.SacctColumns.END;
import static io.kairos.sim.trace.SacctColumns.JOB_ID_RAW;
import static io.kairos.sim.trace.SacctColumns.NCPUS;
import static io.kairos.sim.trace.SacctColumns.NNODES;
import static io.kairos.sim.trace.SacctColumns.REQ_TRES;
import static io.kairos.sim.trace.SacctColumns.START;
import static io.kairos.sim.trace.SacctColumns.SUBMIT;
import static io.kairos.sim.trace.SacctColumns.TIMELIMIT;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads the output of Slurm's {@code sacct --parsable2} (or {@code --parsable}), plain or
 * gzip-compressed, so a Slurm site can replay its own history. The command:
 *
 * <pre>
 * TZ=UTC sacct --allusers --allocations --parsable2 --starttime 2025-01-01 --endtime now \
 *   --format JobID,JobIDRaw,JobName,User,Account,Partition,QOS,Submit,Eligible,Start,End,\
 * Elapsed,Timelimit,NNodes,NCPUS,ReqTRES,AllocTRES,State,ExitCode,Priority
 * </pre>
 *
 * <p>The first line that is not blank is sacct's header; columns are found by name (any order, any
 * case). Required: {@code JobID}, {@code Submit}, {@code Start}, {@code End} or {@code Elapsed},
 * {@code Timelimit}, and {@code AllocTRES} or {@code ReqTRES}. Used when present: {@code JobIDRaw},
 * {@code User}, {@code Partition}, {@code Eligible}, {@code NNodes}, {@code NCPUS}, {@code State}.
 * Every other column is ignored ({@code Account}, {@code QOS} and {@code Priority} among them: the
 * trace job has no account, and sacct's priority is the value at the job's end, so every job gets
 * priority 0).
 *
 * <p>Which lines are jobs:
 *
 * <ol>
 *   <li>Job steps ({@code 123.batch}, {@code 123.extern}, {@code 123.0}, {@code 123_4.0}) are
 *       skipped: only allocations count.
 *   <li>Jobs that never started are skipped: {@code Start} is {@code Unknown} or {@code None},
 *       {@code AllocTRES} is present but empty, the id is a pending array record ({@code
 *       123_[5-10]}), or the state is {@code CANCELLED} and the job ran 0 s (some Slurm versions
 *       print Start = End for a job cancelled while pending).
 *   <li>Jobs still running are skipped: {@code End} is {@code Unknown} (or, without an End column,
 *       the state is RUNNING, PENDING, SUSPENDED, REQUEUED, RESIZING, COMPLETING or CONFIGURING).
 *   <li>Every other job is replayed whatever its end state (COMPLETED, FAILED, TIMEOUT, CANCELLED
 *       after it started, NODE_FAIL, OUT_OF_MEMORY, PREEMPTED, ...), with the run time it had.
 *   <li>Components of a heterogeneous job ({@code 123+0}, {@code 123+1}) become one job with id
 *       123: GPUs added up, the earliest submit, the longest run time and limit, user and partition
 *       of the first component with GPUs. It needs {@code gpus / nodes} GPUs per node when every
 *       component with GPUs has that shape, else its GPUs may be placed anywhere.
 * </ol>
 *
 * <p>How a job's values are found:
 *
 * <ul>
 *   <li>Id: {@code 123} and {@code 123+N} are 123; an array task {@code 123_4} is its {@code
 *       JobIDRaw} when that column is present, else a number after the largest id in the file
 *       (JobID numbers included), in file order (noted). Ids must be unique.
 *   <li>Submit: {@code Submit}, {@code YYYY-MM-DDTHH:MM:SS} local time, as seconds after the
 *       earliest submit in the file. Jobs eligible after they were submitted (dependencies, {@code
 *       --begin}, holds) are still replayed from Submit (noted).
 *   <li>Run time: {@code End - Start}, or {@code Elapsed} without an End column or when End is
 *       before Start (a clock change: run sacct with {@code TZ=UTC}); at least 1 s.
 *   <li>Time limit: {@code Timelimit} ({@code D-HH:MM:SS}, {@code HH:MM:SS}, {@code MM:SS}, ...).
 *       {@code UNLIMITED}, {@code Partition_Limit} or empty count as no limit, and the run time
 *       stands in, as in the other readers; a limit below the run time (TIMEOUT jobs overrun by the
 *       kill wait) is raised to it. Both are noted.
 *   <li>GPUs: from {@code AllocTRES} ({@code gres/gpu=8}, or typed {@code gres/gpu:a100=8}),
 *       falling back to {@code ReqTRES} when AllocTRES is absent or has no GPU entry. The GPU model
 *       is counted in a note but not simulated: the trace job has no model.
 *   <li>Nodes: {@code NNodes}, else {@code node=} in the TRES. When the GPUs divide evenly over the
 *       nodes the job needs {@code gpus / nodes} GPUs on each of that many distinct nodes ({@link
 *       TraceJob#gpusPerNode()}), the shape Slurm gave it; otherwise (8 GPUs on 3 nodes, or no node
 *       count) its GPUs may be placed anywhere (noted).
 *   <li>Jobs without GPUs: when some job in the file has GPUs, CPU-only jobs are skipped (noted).
 *       When none has (a CPU cluster, or a site without {@code AccountingStorageTRES=gres/gpu}),
 *       each CPU ({@code NCPUS}, else {@code cpu=} in the TRES) is one GPU of the simulated
 *       cluster, packed anywhere, as the SWF reader does with processors (noted).
 *   <li>User: {@code User} ("" when empty). Queue: {@code Partition} ("default" when empty).
 * </ul>
 *
 * <p>Jobs are sorted by submit time, then id. Every skip is counted in {@link Trace#rowsDropped()}
 * and explained in a note. A missing column or bad value stops the reading with a {@link
 * TraceFormatException} naming the line and the column.
 */
public final class SacctReader {
  /** The format name, as in {@link Trace#format()} and {@code --format}. */
  public static final String FORMAT = "sacct";

  /** States of a job that has not ended, for files without an End column. */
  private static final Set<String> NOT_ENDED =
      Set.of(
          "RUNNING", "PENDING", "SUSPENDED", "REQUEUED", "RESIZING", "COMPLETING", "CONFIGURING");

  private final String source;
  private final EstimateMode mode;
  private SacctColumns columns;
  private final List<Row> rows = new ArrayList<>();
  private final Map<String, String> strings = new HashMap<>();
  private int rowsRead;
  private int steps;
  private int neverStarted;
  private int stillRunning;
  private int eligibleLater;
  private long largestId;

  private SacctReader(String source, EstimateMode mode) {
    this.source = source;
    this.mode = mode;
  }

  /**
   * Reads sacct output.
   *
   * @param file the file, plain or gzip
   * @param mode where time limits come from
   * @throws TraceFormatException when the file cannot be read, a required column is missing or a
   *     value is bad
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
    var reader = new SacctReader(source, mode);
    long lineNumber = 0;
    String line;
    while ((line = in.readLine()) != null) {
      lineNumber++;
      reader.line(line, lineNumber);
    }
    if (reader.columns == null) {
      throw new TraceFormatException(
          source,
          0,
          "",
          "the file is empty: expected sacct's header line (run sacct --parsable2 without"
              + " --noheader)");
    }
    return SacctJobs.build(reader.rows, reader.summary(), source, mode);
  }

  /** What was skipped or noticed while reading lines, for the notes. */
  record Summary(
      int rowsRead,
      int steps,
      int neverStarted,
      int stillRunning,
      int eligibleLater,
      long largestId) {}

  private Summary summary() {
    return new Summary(rowsRead, steps, neverStarted, stillRunning, eligibleLater, largestId);
  }

  /**
   * One allocation line that will be replayed, before ids are settled and components merged.
   *
   * @param id the job id; 0 when an array task without JobIDRaw still needs one
   * @param hetBase the heterogeneous job's id for a component ({@code 123+N}), else -1
   * @param limitSec the time limit, or 0 when there is none
   * @param gpus GPUs, or -1 when neither TRES names any
   * @param nodes nodes, or -1 when unknown
   * @param cpus CPUs, or -1 when unknown
   * @param state the state's first word ({@code CANCELLED} for {@code CANCELLED by 1234})
   */
  record Row(
      long line,
      String jobId,
      long id,
      long hetBase,
      long submitEpochSec,
      long durationSec,
      long limitSec,
      int gpus,
      String model,
      int nodes,
      int cpus,
      String user,
      String queue,
      String state) {}

  private void line(String text, long lineNumber) {
    if (text.isBlank()) {
      return;
    }
    if (columns == null) {
      columns = SacctColumns.parse(text, source, lineNumber);
      return;
    }
    rowsRead++;
    var values = columns.split(text, source, lineNumber);
    var id = SacctJobId.parse(values[columns.jobId], source, lineNumber);
    largestId = Math.max(largestId, id.base());
    switch (id.kind()) {
      case STEP -> steps++;
      case PENDING_ARRAY -> neverStarted++;
      case JOB, ARRAY_TASK, HET_COMPONENT -> allocation(values, id, lineNumber);
    }
  }

  /** A line of a whole job (not a step): replayed, or counted as never started or running. */
  private void allocation(String[] values, SacctJobId id, long lineNumber) {
    var state = columns.state >= 0 ? firstWord(values[columns.state]) : "";
    var startText = values[columns.start];
    if (SacctTimes.isNoTime(startText)
        || (columns.allocTres >= 0 && values[columns.allocTres].isEmpty())) {
      neverStarted++;
      return;
    }
    long start = instant(values, columns.start, START, lineNumber);
    long end = SacctTimes.NOT_A_TIME;
    if (columns.end >= 0) {
      if (SacctTimes.isNoTime(values[columns.end])) {
        stillRunning++;
        return;
      }
      end = instant(values, columns.end, END, lineNumber);
    } else if (NOT_ENDED.contains(state)) {
      stillRunning++;
      return;
    }
    long submit = instant(values, columns.submit, SUBMIT, lineNumber);
    long duration = duration(values, start, end, lineNumber);
    if (duration == 0 && state.equals("CANCELLED")) {
      neverStarted++;
      return;
    }
    if (columns.eligible >= 0) {
      long eligible = SacctTimes.epochSec(values[columns.eligible]);
      if (eligible != SacctTimes.NOT_A_TIME && eligible > submit) {
        eligibleLater++;
      }
    }
    long limit = limit(values[columns.timelimit], lineNumber);
    var alloc = tres(values, columns.allocTres, ALLOC_TRES, lineNumber);
    var req = tres(values, columns.reqTres, REQ_TRES, lineNumber);
    var gpuTres = alloc.gpus() >= 0 ? alloc : req;
    int nodes =
        columns.nnodes >= 0 && !values[columns.nnodes].isEmpty()
            ? count(values, columns.nnodes, NNODES, 1, lineNumber)
            : alloc.nodes() > 0 ? alloc.nodes() : req.nodes() > 0 ? req.nodes() : -1;
    int cpus =
        columns.ncpus >= 0 && !values[columns.ncpus].isEmpty()
            ? count(values, columns.ncpus, NCPUS, 0, lineNumber)
            : alloc.cpus() >= 0 ? alloc.cpus() : req.cpus();
    rows.add(
        new Row(
            lineNumber,
            values[columns.jobId],
            jobNumber(values, id, lineNumber),
            id.kind() == SacctJobId.Kind.HET_COMPONENT ? id.base() : -1,
            submit,
            duration,
            limit,
            gpuTres.gpus(),
            intern(gpuTres.model()),
            nodes,
            cpus,
            intern(text(values, columns.user)),
            intern(
                text(values, columns.partition).isEmpty()
                    ? "default"
                    : text(values, columns.partition)),
            intern(state)));
  }

  /** The id of a job line: its base number, or JobIDRaw for an array task (0 when absent). */
  private long jobNumber(String[] values, SacctJobId id, long lineNumber) {
    if (id.kind() != SacctJobId.Kind.ARRAY_TASK) {
      return id.base();
    }
    if (columns.jobIdRaw < 0 || values[columns.jobIdRaw].isEmpty()) {
      return 0;
    }
    var raw = values[columns.jobIdRaw];
    double n = TraceNumbers.decimal(raw, 0, raw.length());
    if (!(n >= 1 && TraceNumbers.isWhole(n))) {
      throw new TraceFormatException(
          source, lineNumber, JOB_ID_RAW, "expected a positive whole number, got '" + raw + "'");
    }
    largestId = Math.max(largestId, (long) n);
    return (long) n;
  }

  private long instant(String[] values, int at, String column, long lineNumber) {
    var text = values[at];
    long sec = SacctTimes.epochSec(text);
    if (sec == SacctTimes.NOT_A_TIME) {
      throw new TraceFormatException(
          source,
          lineNumber,
          column,
          "expected a date and time like 2025-01-02T10:00:00 (sacct's default; unset"
              + " SLURM_TIME_FORMAT), got '"
              + text
              + "'");
    }
    return sec;
  }

  /** End - Start, or Elapsed when there is no End or End is before Start. */
  private long duration(String[] values, long start, long end, long lineNumber) {
    if (end != SacctTimes.NOT_A_TIME && end >= start) {
      return end - start;
    }
    if (columns.elapsed < 0) {
      throw new TraceFormatException(
          source,
          lineNumber,
          END,
          "End '"
              + values[columns.end]
              + "' is before Start '"
              + values[columns.start]
              + "' (a clock change? run sacct with TZ=UTC, or add Elapsed to --format)");
    }
    var text = values[columns.elapsed];
    long sec = SacctTimes.lengthSec(text);
    if (sec < 0) {
      throw new TraceFormatException(
          source,
          lineNumber,
          ELAPSED,
          "expected a length of time like 1-02:03:04 or 02:03:04, got '" + text + "'");
    }
    return sec;
  }

  /** The time limit in seconds, or 0 for none (UNLIMITED, Partition_Limit, empty). */
  private long limit(String text, long lineNumber) {
    if (text.isEmpty() || text.equals("UNLIMITED") || text.equals("Partition_Limit")) {
      return 0;
    }
    long sec = SacctTimes.lengthSec(text);
    if (sec < 0) {
      throw new TraceFormatException(
          source,
          lineNumber,
          TIMELIMIT,
          "expected a time limit like 1-00:00:00, 04:00:00, 30:00, UNLIMITED or Partition_Limit,"
              + " got '"
              + text
              + "'");
    }
    return sec;
  }

  private SacctTres tres(String[] values, int at, String column, long lineNumber) {
    return at < 0 ? SacctTres.EMPTY : SacctTres.parse(values[at], source, lineNumber, column);
  }

  private int count(String[] values, int at, String column, int min, long lineNumber) {
    var text = values[at];
    double n = TraceNumbers.decimal(text, 0, text.length());
    if (!(n >= min && TraceNumbers.isInt(n))) {
      throw new TraceFormatException(
          source, lineNumber, column, "expected a whole number >= " + min + ", got '" + text + "'");
    }
    return (int) n;
  }

  private static String text(String[] values, int at) {
    return at < 0 ? "" : values[at];
  }

  private String intern(String s) {
    return strings.computeIfAbsent(s, v -> v);
  }

  /** {@code CANCELLED} for {@code CANCELLED by 1234}. */
  private static String firstWord(String state) {
    int space = state.indexOf(' ');
    return space < 0 ? state : state.substring(0, space);
  }
}

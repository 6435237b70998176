package io.kairos.sim.trace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

class SacctReaderTest {
  @TempDir Path tmp;

  /** The hand-written sample in test resources, modelled on real {@code sacct} output. */
  static Path sample() {
    try {
      return Path.of(SacctReaderTest.class.getResource("/sacct/sample.txt").toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  // ---------------------------------------------------------------- the sample file

  @Test
  void sampleFileMapsEveryJobAndExplainsEverySkip() {
    var trace = SacctReader.read(sample(), EstimateMode.REQUESTED);

    assertThat(trace.format()).isEqualTo("sacct");
    assertThat(trace.jobs())
        .containsExactly(
            // id, submit, gpus, run, limit, user, queue, priority, gpus per node
            new TraceJob(4100, 0, 16, 21_600, 86_400, "alice", "gpu", 0, 8),
            new TraceJob(4101, 300, 1, 1_842, 1_842, "bob", "debug", 0, 1), // TIMEOUT: raised
            new TraceJob(4103, 600, 2, 2_558, 7_200, "carol", "gpu", 0, 2), // 4102_1
            new TraceJob(4104, 600, 2, 3_073, 7_200, "carol", "gpu", 0, 2), // 4102_2
            new TraceJob(4105, 600, 2, 2_846, 7_200, "carol", "gpu", 0, 2), // 4102_3
            new TraceJob(4106, 1_200, 4, 3_600, 3_600, "dave", "gpu-h100", 0, 4), // UNLIMITED
            new TraceJob(4108, 1_800, 16, 7_200, 14_400, "frank", "gpu", 0, 8), // het 4108+0/+1
            new TraceJob(4111, 3_600, 8, 1, 43_200, "grace", "gpu", 0, 8),
            new TraceJob(4112, 4_200, 32, 5_537, 172_800, "henry", "gpu", 0, 8),
            new TraceJob(4113, 4_800, 2, 754, 3_600, "bob", "debug", 0, 2),
            new TraceJob(4114, 5_100, 8, 298, 298, "carol", "gpu", 0, 8), // Partition_Limit
            new TraceJob(4115, 6_000, 8, 1_800, 3_600, "dave", "gpu", 0, 0), // 8 GPUs, 3 nodes
            new TraceJob(4116, 7_200, 4, 2_700, 14_400, "alice", "gpu", 0, 4));
    assertThat(trace.rowsRead()).isEqualTo(39);
    assertThat(trace.rowsDropped()).isEqualTo(25); // 20 steps, 3 never started, 1 running, 1 CPU
    assertThat(trace.estimatesFromRuntime()).isFalse();
    assertThat(trace.notes())
        .containsExactly(
            "20 job steps skipped: only allocations are replayed (sacct --allocations leaves them"
                + " out)",
            "3 jobs never started (pending, or cancelled before they started): skipped",
            "1 jobs were still running (no End): skipped",
            "1 jobs have no GPUs (no gres/gpu in AllocTRES or ReqTRES): skipped",
            "1 heterogeneous jobs (2 components) each replayed as one job",
            "1 jobs have GPUs that do not divide evenly over their nodes (or no node count):"
                + " their GPUs may be placed anywhere",
            "1 jobs became eligible after they were submitted (dependencies, --begin, holds):"
                + " replayed from Submit",
            "GPU models (not simulated: any GPU of the cluster serves any job): a100 9, h100 1,"
                + " no model given 3",
            "end states of the jobs replayed: CANCELLED 1, COMPLETED 6, FAILED 2, NODE_FAIL 1,"
                + " OUT_OF_MEMORY 1, PREEMPTED 1, TIMEOUT 1",
            "2 jobs have no time limit: run time used as time limit",
            "1 jobs ran longer than their time limit: limit raised to run time");
  }

  @Test
  void sampleIsDetectedAndActualModeUsesRunTimes() {
    assertThat(TraceReaders.detect(sample())).isEqualTo("sacct");

    var trace = TraceReaders.read(sample(), "auto", EstimateMode.ACTUAL);

    assertThat(trace.jobs()).hasSize(13).allMatch(j -> j.timeLimitSec() == j.durationSec());
    assertThat(trace.estimatesFromRuntime()).isTrue();
    assertThat(trace.notes()).endsWith("--estimate actual: run times used as time limits");
  }

  // ---------------------------------------------------------------- one line, one job

  private static final String HEADER = "JobID|Submit|Start|End|Timelimit|NNodes|AllocTRES|State";
  private static final String SUBMIT = "2025-01-01T00:00:00";
  private static final String START = "2025-01-01T00:10:00";
  private static final String END = "2025-01-01T01:10:00"; // 3,600 s after START

  /** A line under {@link #HEADER} with the given limit, nodes and TRES. */
  private static String line(String limit, String nodes, String tres) {
    return String.join("|", "7", SUBMIT, START, END, limit, nodes, tres, "COMPLETED");
  }

  record Mapping(String name, String text, TraceJob expected) {
    @Override
    public String toString() {
      return name;
    }
  }

  private static Mapping map(String name, String text, TraceJob expected) {
    return new Mapping(name, text, expected);
  }

  private static TraceJob job(long id, int gpus, long limit, int perNode) {
    return new TraceJob(id, 0, gpus, 3_600, limit, "", "default", 0, perNode);
  }

  static Stream<Mapping> mappings() {
    var h = HEADER + "\n";
    return Stream.of(
        // Time limits: every form Slurm prints or accepts, and the two "no limit" words.
        map("limit D-HH:MM:SS", h + line("1-00:00:00", "1", "gres/gpu=8"), job(7, 8, 86_400, 8)),
        map("limit HH:MM:SS", h + line("04:00:00", "1", "gres/gpu=8"), job(7, 8, 14_400, 8)),
        map("limit MM:SS", h + line("90:30", "1", "gres/gpu=8"), job(7, 8, 5_430, 8)),
        map("limit MM", h + line("120", "1", "gres/gpu=8"), job(7, 8, 7_200, 8)),
        map("limit D-HH", h + line("2-12", "1", "gres/gpu=8"), job(7, 8, 216_000, 8)),
        map("limit D-HH:MM", h + line("1-00:30", "1", "gres/gpu=8"), job(7, 8, 88_200, 8)),
        map("limit 36 hours", h + line("36:00:00", "1", "gres/gpu=8"), job(7, 8, 129_600, 8)),
        map("limit UNLIMITED", h + line("UNLIMITED", "1", "gres/gpu=8"), job(7, 8, 3_600, 8)),
        map(
            "limit Partition_Limit",
            h + line("Partition_Limit", "1", "gres/gpu=8"),
            job(7, 8, 3_600, 8)),
        map("limit empty", h + line("", "1", "gres/gpu=8"), job(7, 8, 3_600, 8)),
        map(
            "limit below run time is raised",
            h + line("00:30:00", "1", "gres/gpu=8"),
            job(7, 8, 3_600, 8)),
        // GPUs from TRES.
        map(
            "untyped and typed GPU entries",
            h
                + line(
                    "02:00:00",
                    "1",
                    "billing=64,cpu=64,gres/gpu:a100=8,gres/gpu=8,mem=500G,node=1"),
            job(7, 8, 7_200, 8)),
        map(
            "typed entries only are added",
            h + line("02:00:00", "1", "gres/gpu:a100=4,gres/gpu:v100=4"),
            job(7, 8, 7_200, 8)),
        map(
            "gpumem and gpuutil are not GPUs",
            h + line("02:00:00", "1", "gres/gpumem=80G,gres/gpuutil=100,gres/gpu=2"),
            job(7, 2, 7_200, 2)),
        map(
            "model with dashes",
            h + line("02:00:00", "1", "gres/gpu:nvidia_a100-sxm4-80gb=4,gres/gpu=4"),
            job(7, 4, 7_200, 4)),
        // Nodes and GPUs per node.
        map(
            "16 GPUs on 2 nodes: 8 per node",
            h + line("02:00:00", "2", "gres/gpu=16,node=2"),
            job(7, 16, 7_200, 8)),
        map(
            "8 GPUs on 3 nodes: anywhere",
            h + line("02:00:00", "3", "gres/gpu=8,node=3"),
            job(7, 8, 7_200, 0)),
        map(
            "2 GPUs on 4 nodes: anywhere",
            h + line("02:00:00", "4", "gres/gpu=2,node=4"),
            job(7, 2, 7_200, 0)),
        map(
            "NNodes empty: node= of the TRES",
            h + line("02:00:00", "", "gres/gpu=16,node=2"),
            job(7, 16, 7_200, 8)),
        map(
            "no node count at all: anywhere",
            "JobID|Submit|Start|End|Timelimit|AllocTRES\n"
                + String.join("|", "7", SUBMIT, START, END, "02:00:00", "gres/gpu=16"),
            job(7, 16, 7_200, 0)),
        // Where values come from when columns are missing or say nothing.
        map(
            "ReqTRES when AllocTRES has no GPU entry",
            "JobID|Submit|Start|End|Timelimit|NNodes|ReqTRES|AllocTRES\n"
                + String.join(
                    "|",
                    "7",
                    SUBMIT,
                    START,
                    END,
                    "02:00:00",
                    "1",
                    "cpu=8,gres/gpu=4,node=1",
                    "cpu=8,node=1"),
            job(7, 4, 7_200, 4)),
        map(
            "ReqTRES alone",
            "JobID|Submit|Start|End|Timelimit|NNodes|ReqTRES\n"
                + String.join("|", "7", SUBMIT, START, END, "02:00:00", "1", "gres/gpu=4"),
            job(7, 4, 7_200, 4)),
        map(
            "Elapsed without End",
            "JobID|Submit|Start|Elapsed|Timelimit|AllocTRES|State\n"
                + String.join(
                    "|", "7", SUBMIT, START, "1-00:00:01", "UNLIMITED", "gres/gpu=1", "COMPLETED"),
            new TraceJob(7, 0, 1, 86_401, 86_401, "", "default", 0, 0)),
        map(
            "End before Start (a clock change): Elapsed",
            "JobID|Submit|Start|End|Elapsed|Timelimit|AllocTRES\n"
                + String.join(
                    "|",
                    "7",
                    SUBMIT,
                    "2025-10-26T02:30:00",
                    "2025-10-26T02:10:00",
                    "00:40:00",
                    "UNLIMITED",
                    "gres/gpu=1"),
            new TraceJob(7, 0, 1, 2_400, 2_400, "", "default", 0, 0)),
        map(
            "zero run time counts as 1 s",
            HEADER
                + "\n"
                + String.join(
                    "|", "7", SUBMIT, START, START, "01:00:00", "1", "gres/gpu=1", "FAILED"),
            new TraceJob(7, 0, 1, 1, 3_600, "", "default", 0, 1)),
        map(
            "user and partition; other columns ignored",
            "JobID|JobName|User|Account|Partition|QOS|Priority|Submit|Start|End|Timelimit|AllocTRES\n"
                + String.join(
                    "|",
                    "7",
                    "x",
                    "alice",
                    "proj",
                    "gpu",
                    "high",
                    "4294901760",
                    SUBMIT,
                    START,
                    END,
                    "02:00:00",
                    "gres/gpu=1"),
            new TraceJob(7, 0, 1, 3_600, 7_200, "alice", "gpu", 0, 0)),
        map(
            "header in any case and order, --parsable's trailing '|', CRLF",
            "alloctres|TIMELIMIT|end|start|submit|jobid|\r\n"
                + String.join("|", "gres/gpu=1", "02:00:00", END, START, SUBMIT, "7")
                + "|\r\n",
            new TraceJob(7, 0, 1, 3_600, 7_200, "", "default", 0, 0)),
        map(
            "a space instead of T in times",
            HEADER
                + "\n"
                + String.join(
                    "|",
                    "7",
                    "2025-01-01 00:00:00",
                    "2025-01-01 00:10:00",
                    "2025-01-01 01:10:00",
                    "02:00:00",
                    "1",
                    "gres/gpu=1",
                    "COMPLETED"),
            job(7, 1, 7_200, 1)),
        map(
            "array task with JobIDRaw keeps Slurm's id",
            "JobID|JobIDRaw|Submit|Start|End|Timelimit|AllocTRES\n"
                + String.join("|", "123_4", "130", SUBMIT, START, END, "02:00:00", "gres/gpu=1"),
            new TraceJob(130, 0, 1, 3_600, 7_200, "", "default", 0, 0)),
        map(
            "array task without JobIDRaw is numbered after the largest id",
            "JobID|Submit|Start|End|Timelimit|AllocTRES\n"
                + String.join("|", "123_4", SUBMIT, START, END, "02:00:00", "gres/gpu=1"),
            new TraceJob(124, 0, 1, 3_600, 7_200, "", "default", 0, 0)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("mappings")
  void mapsOneLine(Mapping m) throws IOException {
    var trace = SacctReader.read(write(m.text()), EstimateMode.REQUESTED);

    assertThat(trace.jobs()).containsExactly(m.expected());
  }

  // ---------------------------------------------------------------- which lines are jobs

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource(
      delimiter = ';',
      value = {
        "7.batch;           steps",
        "7.extern;          steps",
        "7.0;               steps",
        "7_3.batch;         steps",
        "7+1.0;             steps",
        "7_[1-5];           never started",
        "7_[1,3,5%2];       never started",
      })
  void stepsAndPendingArrayRecordsAreSkipped(String jobId, String reason) throws IOException {
    var file = write(HEADER + "\n" + line("01:00:00", "1", "gres/gpu=1").replaceFirst("7", jobId));

    var trace = SacctReader.read(file, EstimateMode.REQUESTED);

    assertThat(trace.jobs()).isEmpty();
    assertThat(trace.rowsRead()).isEqualTo(1);
    assertThat(trace.rowsDropped()).isEqualTo(1);
    assertThat(trace.notes().getFirst()).contains(reason);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = ';',
      value = {
        // state; Start; End; AllocTRES; the note
        "PENDING;            Unknown;             Unknown;             '';         never started",
        "PENDING;            None;                Unknown;             '';         never started",
        "CANCELLED by 1234;  None;                2025-01-01T00:20:00; '';         never started",
        "CANCELLED by 1234;  2025-01-01T00:20:00; 2025-01-01T00:20:00; '';         never started",
        "CANCELLED;          2025-01-01T00:20:00; 2025-01-01T00:20:00; gres/gpu=1; never started",
        "RUNNING;            2025-01-01T00:20:00; Unknown;             gres/gpu=1; still running",
        "REQUEUED;           2025-01-01T00:20:00; None;                gres/gpu=1; still running",
        "COMPLETED;          2025-01-01T00:20:00; 2025-01-01T00:30:00; cpu=4;      no GPUs",
      })
  void jobsThatCannotBeReplayedAreSkippedAndCounted(
      String state, String start, String end, String tres, String note) throws IOException {
    var gpuJob =
        String.join("|", "1", SUBMIT, START, END, "01:00:00", "1", "gres/gpu=1", "COMPLETED");
    var other = String.join("|", "2", SUBMIT, start, end, "01:00:00", "1", tres, state);
    var file = write(HEADER + "\n" + gpuJob + "\n" + other + "\n");

    var trace = SacctReader.read(file, EstimateMode.REQUESTED);

    assertThat(trace.jobs()).extracting(TraceJob::id).containsExactly(1L);
    assertThat(trace.rowsDropped()).isEqualTo(1);
    assertThat(trace.notes()).anyMatch(n -> n.startsWith("1 jobs") && n.contains(note));
  }

  @Test
  void withoutAnEndColumnTheStateTellsRunningJobs() throws IOException {
    var file =
        write(
            "JobID|Submit|Start|Elapsed|Timelimit|AllocTRES|State\n"
                + String.join(
                    "|", "1", SUBMIT, START, "00:10:00", "01:00:00", "gres/gpu=1", "RUNNING")
                + "\n"
                + String.join(
                    "|", "2", SUBMIT, START, "00:10:00", "01:00:00", "gres/gpu=1", "TIMEOUT")
                + "\n");

    var trace = SacctReader.read(file, EstimateMode.REQUESTED);

    assertThat(trace.jobs()).extracting(TraceJob::id).containsExactly(2L);
    assertThat(trace.notes()).contains("1 jobs were still running (no End): skipped");
  }

  @Test
  void heterogeneousComponentsBecomeOneJob() throws IOException {
    var h = "JobID|User|Partition|Submit|Start|End|Timelimit|NNodes|AllocTRES\n";
    var file =
        write(
            h
                + String.join(
                    "|", "50+0", "ann", "cpu", SUBMIT, START, END, "02:00:00", "1", "cpu=4,node=1")
                + "\n"
                + String.join(
                    "|",
                    "50+1",
                    "ann",
                    "gpu",
                    SUBMIT,
                    START,
                    END,
                    "03:00:00",
                    "2",
                    "gres/gpu=16,node=2")
                + "\n"
                + String.join(
                    "|",
                    "50+2",
                    "ann",
                    "gpu",
                    SUBMIT,
                    START,
                    END,
                    "02:00:00",
                    "1",
                    "gres/gpu:a100=8,node=1")
                + "\n"
                + String.join(
                    "|",
                    "51+0",
                    "ann",
                    "gpu",
                    SUBMIT,
                    START,
                    END,
                    "02:00:00",
                    "2",
                    "gres/gpu=8,node=2")
                + "\n"
                + String.join(
                    "|",
                    "51+1",
                    "ann",
                    "gpu",
                    SUBMIT,
                    START,
                    END,
                    "02:00:00",
                    "1",
                    "gres/gpu=8,node=1")
                + "\n");

    var trace = SacctReader.read(file, EstimateMode.REQUESTED);

    assertThat(trace.jobs())
        .containsExactly(
            // 16 on 2 nodes and 8 on 1: 8 per node everywhere; the longest limit
            new TraceJob(50, 0, 24, 3_600, 10_800, "ann", "gpu", 0, 8),
            // 4 per node and 8 per node: no common shape, anywhere
            new TraceJob(51, 0, 16, 3_600, 7_200, "ann", "gpu", 0, 0));
    assertThat(trace.notes())
        .contains("2 heterogeneous jobs (5 components) each replayed as one job");
  }

  @Test
  void cpuOnlyTraceUsesCpusAsGpus() throws IOException {
    var file =
        write(
            "JobID|Submit|Start|End|Timelimit|NNodes|NCPUS|AllocTRES\n"
                + String.join(
                    "|", "1", SUBMIT, START, END, "02:00:00", "2", "256", "cpu=256,mem=500G,node=2")
                + "\n"
                + String.join("|", "2", SUBMIT, START, END, "02:00:00", "1", "", "cpu=4,node=1")
                + "\n");

    var trace = SacctReader.read(file, EstimateMode.REQUESTED);

    assertThat(trace.jobs())
        .containsExactly(
            new TraceJob(1, 0, 256, 3_600, 7_200, "", "default", 0, 0),
            new TraceJob(2, 0, 4, 3_600, 7_200, "", "default", 0, 0));
    assertThat(trace.notes()).anyMatch(n -> n.startsWith("no job has GPUs"));
  }

  @Test
  void submitTimesAreRelativeToTheEarliestAndJobsSorted() throws IOException {
    var h = "JobID|Submit|Start|End|Timelimit|AllocTRES\n";
    var file =
        write(
            h
                + "9|2025-01-01T00:00:10|2025-01-01T00:00:10|2025-01-01T00:01:10|UNLIMITED|gres/gpu=1\n"
                + "8|2025-01-01T00:00:10|2025-01-01T00:00:10|2025-01-01T00:01:10|UNLIMITED|gres/gpu=1\n"
                + "5|2024-12-31T23:59:00|2025-01-01T00:00:00|2025-01-01T00:01:00|UNLIMITED|gres/gpu=1\n");

    var trace = SacctReader.read(file, EstimateMode.REQUESTED);

    assertThat(trace.jobs()).extracting(TraceJob::id).containsExactly(5L, 8L, 9L);
    assertThat(trace.jobs()).extracting(TraceJob::submitSec).containsExactly(0L, 70L, 70L);
    assertThat(trace.estimatesFromRuntime()).isTrue();
  }

  @Test
  void headerOnlyGivesNoJobs() throws IOException {
    var trace = SacctReader.read(write(HEADER + "\n"), EstimateMode.REQUESTED);

    assertThat(trace.jobs()).isEmpty();
    assertThat(trace.rowsRead()).isZero();
  }

  // ---------------------------------------------------------------- errors

  record Failure(String name, String text, long line, String field, String detail) {
    @Override
    public String toString() {
      return name;
    }
  }

  private static Failure fails(String name, String text, long line, String field, String detail) {
    return new Failure(name, text, line, field, detail);
  }

  /** {@link #HEADER} and one line with {@code value} in column {@code at}. */
  private static String withValue(int at, String value) {
    var values = line("01:00:00", "1", "gres/gpu=1").split("\\|", -1);
    values[at] = value;
    return HEADER + "\n" + String.join("|", values) + "\n";
  }

  static Stream<Failure> failures() {
    var ok = line("01:00:00", "1", "gres/gpu=1");
    return Stream.of(
        // The header.
        fails(
            "no JobID",
            "Submit|Start|End|Timelimit|AllocTRES\n",
            1,
            "JobID",
            "required column is missing from the header (found: Submit,Start,End,Timelimit,"
                + "AllocTRES)"),
        fails(
            "no Submit",
            "JobID|Start|End|Timelimit|AllocTRES\n",
            1,
            "Submit",
            "required column is missing"),
        fails(
            "no Start",
            "JobID|Submit|End|Timelimit|AllocTRES\n",
            1,
            "Start",
            "required column is missing"),
        fails(
            "no End or Elapsed",
            "JobID|Submit|Start|Timelimit|AllocTRES\n",
            1,
            "End",
            "the header needs End or Elapsed"),
        fails(
            "no Timelimit",
            "JobID|Submit|Start|End|AllocTRES\n",
            1,
            "Timelimit",
            "required column is missing"),
        fails(
            "no TRES",
            "JobID|Submit|Start|End|Timelimit|NNodes\n",
            1,
            "AllocTRES",
            "the header needs AllocTRES or ReqTRES"),
        fails("--noheader", ok + "\n", 1, "JobID", "run sacct without --noheader"),
        fails(
            "column twice",
            "JobID|Submit|Start|End|Timelimit|AllocTRES|jobid\n",
            1,
            "jobid",
            "the column appears twice in the header"),
        fails(
            "column without a name",
            "JobID||Submit\n",
            1,
            "",
            "column 2 of the header has no name"),
        fails("empty file", "\n\n", 0, "", "the file is empty"),
        // Values.
        fails(
            "too few values",
            HEADER + "\n7|" + SUBMIT + "\n",
            2,
            "",
            "expected 8 '|'-separated values (as in the header), got 2"),
        fails(
            "a '|' in a value",
            HEADER + "\n" + ok + "|x\n",
            2,
            "",
            "got 9 (a '|' inside a value such as JobName? leave that column out of --format)"),
        fails(
            "job id not a number",
            withValue(0, "abc"),
            2,
            "JobID",
            "expected a job id like 123, 123_4, 123_[1-5], 123+0 or 123.batch, got 'abc'"),
        fails("job id 0", withValue(0, "0"), 2, "JobID", "got '0'"),
        fails("job id with junk", withValue(0, "12x"), 2, "JobID", "got '12x'"),
        fails("array task without number", withValue(0, "12_"), 2, "JobID", "got '12_'"),
        fails("het without offset", withValue(0, "12+"), 2, "JobID", "got '12+'"),
        fails(
            "bad Submit month",
            withValue(1, "2025-13-01T00:00:00"),
            2,
            "Submit",
            "expected a date and time like 2025-01-02T10:00:00 (sacct's default; unset"
                + " SLURM_TIME_FORMAT), got '2025-13-01T00:00:00'"),
        fails("Submit Unknown", withValue(1, "Unknown"), 2, "Submit", "got 'Unknown'"),
        fails("relative Start", withValue(2, "yesterday"), 2, "Start", "got 'yesterday'"),
        fails("bad End", withValue(3, "2025-02-30T00:00:00"), 2, "End", "got '2025-02-30"),
        fails(
            "End before Start without Elapsed",
            withValue(3, "2025-01-01T00:00:00"),
            2,
            "End",
            "End '2025-01-01T00:00:00' is before Start '2025-01-01T00:10:00' (a clock change?"
                + " run sacct with TZ=UTC, or add Elapsed to --format)"),
        fails(
            "limit a word",
            withValue(4, "forever"),
            2,
            "Timelimit",
            "expected a time limit like 1-00:00:00, 04:00:00, 30:00, UNLIMITED or"
                + " Partition_Limit, got 'forever'"),
        fails(
            "limit 25 hours after days",
            withValue(4, "1-25:00:00"),
            2,
            "Timelimit",
            "got '1-25:00:00'"),
        fails("limit 61 seconds", withValue(4, "10:61"), 2, "Timelimit", "got '10:61'"),
        fails("limit four parts", withValue(4, "1:00:00:00"), 2, "Timelimit", "got '1:00:00:00'"),
        fails("limit lower case", withValue(4, "unlimited"), 2, "Timelimit", "got 'unlimited'"),
        fails("NNodes 0", withValue(5, "0"), 2, "NNodes", "expected a whole number >= 1, got '0'"),
        fails("NNodes a word", withValue(5, "two"), 2, "NNodes", "got 'two'"),
        fails(
            "GPU count a word",
            withValue(6, "cpu=8,gres/gpu=eight"),
            2,
            "AllocTRES",
            "expected a whole count in 'gres/gpu=eight', got 'eight'"),
        fails(
            "typed GPU count negative",
            withValue(6, "gres/gpu:a100=-1"),
            2,
            "AllocTRES",
            "expected a whole count in 'gres/gpu:a100=-1'"),
        fails(
            "TRES pair without =",
            withValue(6, "cpu=8,gres/gpu"),
            2,
            "AllocTRES",
            "expected name=value pairs like cpu=8,gres/gpu=8,node=1, got 'gres/gpu'"),
        fails(
            "bad ReqTRES",
            "JobID|Submit|Start|End|Timelimit|ReqTRES\n"
                + String.join("|", "7", SUBMIT, START, END, "01:00:00", "node=x"),
            2,
            "ReqTRES",
            "expected a whole count in 'node=x'"),
        fails(
            "bad Elapsed",
            "JobID|Submit|Start|Elapsed|Timelimit|AllocTRES\n"
                + String.join("|", "7", SUBMIT, START, "1:2:3:4", "01:00:00", "gres/gpu=1"),
            2,
            "Elapsed",
            "expected a length of time like 1-02:03:04 or 02:03:04, got '1:2:3:4'"),
        fails(
            "bad JobIDRaw",
            "JobID|JobIDRaw|Submit|Start|End|Timelimit|AllocTRES\n"
                + String.join("|", "7_1", "x", SUBMIT, START, END, "01:00:00", "gres/gpu=1"),
            2,
            "JobIDRaw",
            "expected a positive whole number, got 'x'"),
        fails(
            "duplicate id",
            HEADER + "\n" + ok + "\n" + ok + "\n",
            3,
            "JobID",
            "job id 7 ('7') was already used on line 2 (sacct --duplicates lists requeued jobs"
                + " more than once; leave it out)"),
        fails(
            "het id used by a job too",
            HEADER + "\n" + ok + "\n" + ok.replaceFirst("7", "7+0") + "\n",
            3,
            "JobID",
            "job id 7 ('7+0') was already used on line 2"),
        fails(
            "CPUs as GPUs without a CPU count",
            "JobID|Submit|Start|End|Timelimit|AllocTRES\n"
                + String.join("|", "7", SUBMIT, START, END, "01:00:00", "mem=4G,node=1"),
            2,
            "NCPUS",
            "add NCPUS to --format"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("failures")
  void badInputNamesFileLineAndColumn(Failure f) throws IOException {
    var file = write(f.text());

    assertThatThrownBy(() -> SacctReader.read(file, EstimateMode.REQUESTED))
        .isInstanceOfSatisfying(
            TraceFormatException.class,
            e -> {
              assertThat(e.file()).isEqualTo(file.toString());
              assertThat(e.line()).as("line").isEqualTo(f.line());
              assertThat(e.field()).as("field").isEqualTo(f.field());
              var where = f.line() > 0 ? file + ":" + f.line() : file.toString();
              var prefix =
                  f.field().isEmpty() ? where + ": " : where + ": field '" + f.field() + "': ";
              assertThat(e.getMessage()).startsWith(prefix).contains(f.detail());
            });
  }

  @Test
  void stepLinesAreNotValidated() throws IOException {
    // A step's columns are partly empty in real output; nothing in them may stop the reading.
    var file = write(HEADER + "\n7.batch|||garbage|||cpu|\n");

    assertThat(SacctReader.read(file, EstimateMode.REQUESTED).jobs()).isEmpty();
  }

  // ---------------------------------------------------------------- time parsing

  @ParameterizedTest(name = "{0} = {1} s")
  @CsvSource({
    "0, 0",
    "59, 3540",
    "00:59, 59",
    "1:00, 60",
    "00:00:01, 1",
    "99:59:59, 359999",
    "0-00, 0",
    "3-00:00:00, 259200",
    "1-23:59:59, 172799",
    "10-0:5, 864300",
  })
  void lengthsParse(String text, long seconds) {
    assertThat(SacctTimes.lengthSec(text)).isEqualTo(seconds);
  }

  @ParameterizedTest
  @CsvSource({"''", "-", "1-", "-1", ":", "1::2", "1:2:3:4", "1-2:3:4:5", "a", "1.5", "1234567890"})
  void nonLengthsAreRejected(String text) {
    assertThat(SacctTimes.lengthSec(text)).isEqualTo(-1);
  }

  @Test
  void instantsReadAsUtc() {
    assertThat(SacctTimes.epochSec("1970-01-01T00:00:00")).isZero();
    assertThat(SacctTimes.epochSec("2024-02-29T23:59:59")).isEqualTo(1_709_251_199L);
    for (var bad :
        List.of(
            "2023-02-29T00:00:00",
            "2025-01-01T24:00:00",
            "2025-01-01",
            "2025-01-01T00:00:00Z",
            "Unknown",
            "")) {
      assertThat(SacctTimes.epochSec(bad)).as(bad).isEqualTo(SacctTimes.NOT_A_TIME);
    }
  }

  private Path write(String text) throws IOException {
    var file = tmp.resolve("sacct.txt");
    Files.writeString(file, text, StandardCharsets.UTF_8);
    return file;
  }
}

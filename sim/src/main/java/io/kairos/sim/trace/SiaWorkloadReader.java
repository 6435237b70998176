package io.kairos.sim.trace;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Reads the Pollux and Sia evaluation workloads ({@code philly/pollux_workloads/}, {@code
 * philly/sia_philly_workloads/}, {@code helios/sia_saturn_workloads/}): columns {@code
 * name,time,application,num_replicas,batch_size}, found by name ({@code time}, {@code application}
 * and {@code num_replicas} are required, the others ignored).
 *
 * <p>These files carry no run time: in Pollux and Sia a job runs until its model converges, from
 * measured goodput profiles. Kairos gives each job a fixed amount of work instead, from the
 * GPU-time band its application class was drawn from (the workloads map a Philly job's GPU time to
 * a class: under 1 GPU-hour cifar10 or ncf, 1 to 10 deepspeech2 or bert, 10 to 100 yolov3, over 100
 * imagenet, and sample jobs under 1,000 GPU-hours): the band's geometric middle, so {@link
 * #GPU_HOURS}. The run time is that GPU time over {@code num_replicas} GPUs, rounded up to whole
 * seconds. So these runs compare schedulers on the workloads' arrival pattern and sizes, not Sia's
 * goodput.
 *
 * <p>Jobs are sorted by {@code time} (ties keep file order) and numbered 1, 2, ...; the queue is
 * {@code default}, there is no user, no estimate (run times are the limits) and the GPUs may be
 * packed anywhere. A bad value names the line and the column.
 */
public final class SiaWorkloadReader {
  /** The format name, as in {@link Trace#format()} and {@code --format}. */
  public static final String FORMAT = "sia-workload";

  static final String TIME = "time";
  static final String APPLICATION = "application";
  static final String REPLICAS = "num_replicas";
  private static final List<String> REQUIRED = List.of(TIME, APPLICATION, REPLICAS);

  /** GPU-hours of work per application class (the middle of its band, on a log scale). */
  public static final Map<String, Double> GPU_HOURS =
      Map.of(
          "cifar10", 0.5,
          "ncf", 0.5,
          "deepspeech2", 3.16,
          "bert", 3.16,
          "yolov3", 31.6,
          "imagenet", 316.0);

  private SiaWorkloadReader() {}

  /** Reads a workload file, plain or gzip. */
  public static Trace read(Path file) {
    var source = file.toString();
    try (var in = TraceFiles.open(file, source)) {
      return read(in, source);
    } catch (IOException e) {
      throw TraceFiles.cannotRead(source, e);
    }
  }

  private record Row(long submitSec, int order, int gpus, long durationSec) {}

  static Trace read(BufferedReader in, String source) throws IOException {
    var csv = new CsvLine();
    CsvHeader header = null;
    int timeAt = -1;
    int applicationAt = -1;
    int replicasAt = -1;
    var rows = new ArrayList<Row>();
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
        timeAt = header.position(TIME);
        applicationAt = header.position(APPLICATION);
        replicasAt = header.position(REPLICAS);
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
      double time = csv.decimal(timeAt);
      if (!(time >= 0 && time < 1e12)) {
        throw new TraceFormatException(
            source,
            lineNumber,
            TIME,
            "expected a number of seconds >= 0, got '" + csv.text(timeAt) + "'");
      }
      double replicas = csv.decimal(replicasAt);
      if (!(replicas >= 1 && replicas <= 1 << 20 && TraceNumbers.isInt(replicas))) {
        throw new TraceFormatException(
            source,
            lineNumber,
            REPLICAS,
            "expected a whole number of GPUs >= 1, got '" + csv.text(replicasAt) + "'");
      }
      var application = csv.text(applicationAt);
      Double gpuHours = GPU_HOURS.get(application);
      if (gpuHours == null) {
        throw new TraceFormatException(
            source,
            lineNumber,
            APPLICATION,
            "unknown application '"
                + application
                + "': expected one of "
                + String.join(", ", GPU_HOURS.keySet().stream().sorted().toList()));
      }
      int gpus = (int) replicas;
      long durationSec = Math.max(1, (long) Math.ceil(gpuHours * 3600 / gpus - 1e-9));
      rows.add(new Row((long) Math.floor(time), rows.size(), gpus, durationSec));
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
            a.submitSec() != b.submitSec()
                ? Long.compare(a.submitSec(), b.submitSec())
                : Integer.compare(a.order(), b.order()));
    var jobs = new ArrayList<TraceJob>(sorted.length);
    for (int i = 0; i < sorted.length; i++) {
      var row = sorted[i];
      jobs.add(
          new TraceJob(
              i + 1,
              row.submitSec(),
              row.gpus(),
              row.durationSec(),
              row.durationSec(),
              "",
              "default",
              0,
              0));
    }
    var notes =
        List.of(
            "trace has no run times: each application's GPU-hours (cifar10/ncf 0.5, bert/deepspeech2"
                + " 3.16, yolov3 31.6, imagenet 316) over its GPUs; run times used as time limits");
    return new Trace(source, FORMAT, jobs, rows.size(), 0, true, notes);
  }
}

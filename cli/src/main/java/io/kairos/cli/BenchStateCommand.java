package io.kairos.cli;

import io.kairos.control.raft.CommandCodec;
import io.kairos.control.state.ControlCommand;
import io.kairos.control.state.ControlCommand.CancelJob;
import io.kairos.control.state.ControlCommand.ForgetJobs;
import io.kairos.control.state.ControlCommand.SubmitJobs;
import io.kairos.control.state.ControlState;
import io.kairos.control.state.JobRequest;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code kairos bench state}: how the replicated state and its snapshot grow with ended jobs, with
 * and without the accounting store's retention. Drives the controller's own state machine ({@link
 * ControlState}) and snapshot codec in this process, no server: {@code --live} pending jobs, then
 * {@code --finished} jobs submitted and cancelled in batches of 1,000; with retention each batch's
 * ended jobs are forgotten (a {@link ForgetJobs}, as the leader proposes once they are written)
 * beyond the {@code --retain-count} most recent.
 */
@Command(
    name = "state",
    mixinStandardHelpOptions = true,
    description = {
      "Replicated state and snapshot size after many ended jobs, with and without retention"
          + " (the accounting store's --retain-finished-count): the controller's state machine"
          + " and snapshot codec, in this process."
    })
final class BenchStateCommand implements Callable<Integer> {
  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Option(
      names = "--finished",
      paramLabel = "N",
      defaultValue = "100000",
      description = "Jobs submitted and ended (default ${DEFAULT-VALUE}).")
  int finished;

  @Option(
      names = "--live",
      paramLabel = "N",
      defaultValue = "1000",
      description = "Pending jobs kept throughout (default ${DEFAULT-VALUE}).")
  int live;

  @Option(
      names = "--retain-count",
      paramLabel = "N",
      defaultValue = "1000",
      description = "Ended jobs kept with retention (default ${DEFAULT-VALUE}).")
  int retainCount;

  @Option(
      names = "--repeat",
      paramLabel = "N",
      defaultValue = "5",
      description =
          "Snapshots timed at each checkpoint (median and spread; default ${DEFAULT-VALUE}).")
  int repeat;

  @Option(
      names = "--modes",
      paramLabel = "none,retain",
      defaultValue = "none,retain",
      description =
          "Which runs: none (every ended job kept), retain (ended jobs forgotten beyond"
              + " --retain-count), or both (default ${DEFAULT-VALUE}).")
  String modes;

  static final int BATCH = 1_000;

  @Override
  public Integer call() throws IOException {
    if (finished < 1 || live < 0 || retainCount < 0 || repeat < 1) {
      throw new UsageException("--finished >= 1, --live >= 0, --retain-count >= 0, --repeat >= 1");
    }
    PrintWriter out = spec.commandLine().getOut();
    out.printf(
        Locale.ROOT,
        "%-9s %9s %9s %12s %7s %11s %14s %17s%n",
        "RETAIN",
        "FINISHED",
        "IN_STATE",
        "SNAPSHOT_B",
        "B/JOB",
        "B/LIVE_JOB",
        "COPY_MS",
        "ENCODE_MS");
    List<String> chosen = Arrays.stream(modes.split(",")).map(String::strip).toList();
    for (String m : chosen) {
      if (!m.equals("none") && !m.equals("retain")) {
        throw new UsageException("--modes takes none and retain, got '" + m + "'");
      }
    }
    for (String m : chosen) {
      run(out, m.equals("retain"));
    }
    out.flush();
    return 0;
  }

  private void run(PrintWriter out, boolean retain) throws IOException {
    var state = new ControlState();
    long t = 1_700_000_000_000L;
    var pending = new ArrayList<JobRequest>();
    for (int i = 0; i < live; i++) {
      pending.add(request("live-" + i));
    }
    if (!pending.isEmpty()) {
      apply(state, new SubmitJobs(t, pending));
    }
    var ended = new ArrayList<Long>();
    int done = 0;
    int nextCheckpoint = 1_000;
    while (done < finished) {
      int n = Math.min(BATCH, finished - done);
      var batch = new ArrayList<JobRequest>(n);
      for (int i = 0; i < n; i++) {
        batch.add(request("done-" + (done + i)));
      }
      long first = state.nextJobId();
      apply(state, new SubmitJobs(++t, batch));
      for (long id = first; id < first + n; id++) {
        apply(state, new CancelJob(++t, id, "alice"));
        ended.add(id);
      }
      done += n;
      if (retain && ended.size() > retainCount) {
        var forget = ended.subList(0, ended.size() - retainCount);
        apply(state, new ForgetJobs(++t, List.copyOf(forget)));
        forget.clear();
        state.takeForgotten();
      }
      if (done >= nextCheckpoint || done == finished) {
        checkpoint(out, state, retain, done);
        while (nextCheckpoint <= done) {
          nextCheckpoint *= 10;
        }
      }
    }
  }

  private void checkpoint(PrintWriter out, ControlState state, boolean retain, int done)
      throws IOException {
    long[] copyNs = new long[repeat];
    long[] encodeNs = new long[repeat];
    long bytes = 0;
    for (int i = 0; i < repeat; i++) {
      long t0 = System.nanoTime();
      var image = state.image();
      long t1 = System.nanoTime();
      var counter = new Counting();
      CommandCodec.writeImage(image, counter);
      encodeNs[i] = System.nanoTime() - t1;
      copyNs[i] = t1 - t0;
      bytes = counter.bytes;
    }
    int inState = state.jobCount();
    out.printf(
        Locale.ROOT,
        "%-9s %9d %9d %12d %7d %11s %14s %17s%n",
        retain ? "count " + retainCount : "none",
        done,
        inState,
        bytes,
        bytes / Math.max(1, inState),
        live == 0 ? "-" : String.valueOf(bytes / live),
        spread(copyNs),
        spread(encodeNs));
    out.flush();
  }

  /** Median (min-max) in milliseconds. */
  private static String spread(long[] ns) {
    long[] s = ns.clone();
    Arrays.sort(s);
    return String.format(
        Locale.ROOT, "%.1f (%.1f-%.1f)", s[s.length / 2] / 1e6, s[0] / 1e6, s[s.length - 1] / 1e6);
  }

  private static void apply(ControlState state, ControlCommand c) {
    var r = state.apply(c);
    if (r.status() >= 300) {
      throw new IllegalStateException(c.getClass().getSimpleName() + " refused: " + r);
    }
  }

  private static JobRequest request(String name) {
    return new JobRequest(
        name,
        List.of("python", "train.py", "--epochs", "3"),
        Map.of("RUN", name),
        "/home/alice",
        1,
        0,
        4,
        16_384,
        3600,
        "default",
        0,
        "",
        "alice");
  }

  /** Counts bytes, keeps none. */
  private static final class Counting extends OutputStream {
    long bytes;

    @Override
    public void write(int b) {
      bytes++;
    }

    @Override
    public void write(byte[] b, int off, int len) {
      bytes += len;
    }
  }
}

package io.kairos.cli;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The controller's own figures during a load run, read from its {@code /metrics} every few seconds
 * by {@code kairos bench submit --server-stats}: live jobs (pending and running), jobs in the
 * replicated state, heap in use, snapshots written and their times, ended jobs not yet in the
 * accounting store. Keeps the latest sample and the peaks since the last {@link #takePeaks}.
 */
final class ServerGauges {
  /** One scrape of {@code /metrics}. */
  record Sample(
      double pending,
      double running,
      double inState,
      double heapBytes,
      double snapshots,
      double snapshotLastMs,
      double snapshotMaxMs,
      double snapshotJobs,
      double unwritten) {
    double live() {
      return pending + running;
    }

    String line() {
      return String.format(
          Locale.ROOT,
          "server: live jobs %.0f (pending %.0f, running %.0f), in state %.0f, heap %.0f MiB,"
              + " snapshots %.0f (last %.0f ms, %.0f jobs; longest %.0f ms), unwritten %.0f",
          live(),
          pending,
          running,
          inState,
          heapBytes / (1 << 20),
          snapshots,
          snapshotLastMs,
          snapshotJobs,
          snapshotMaxMs,
          unwritten);
    }
  }

  private final ApiClient api;
  private final AtomicReference<Sample> latest = new AtomicReference<>();
  private final AtomicReference<double[]> peaks = new AtomicReference<>(new double[3]);
  private Thread thread;

  ServerGauges(ApiClient api) {
    this.api = api;
  }

  /** Samples every {@code everyMs} until {@link #stop}. */
  void start(long everyMs) {
    thread =
        Thread.ofVirtual()
            .start(
                () -> {
                  while (!Thread.currentThread().isInterrupted()) {
                    sampleNow();
                    try {
                      Thread.sleep(everyMs);
                    } catch (InterruptedException e) {
                      return;
                    }
                  }
                });
  }

  void stop() throws InterruptedException {
    if (thread != null) {
      thread.interrupt();
      thread.join();
    }
  }

  /** One scrape now; a failed one is skipped (the server may be busy). */
  Sample sampleNow() {
    try {
      var r = api.send("GET", "/metrics", null);
      if (r.status() != 200) {
        return latest.get();
      }
      Sample s = parse(new String(r.body(), StandardCharsets.UTF_8));
      latest.set(s);
      peaks.updateAndGet(
          p ->
              new double[] {
                Math.max(p[0], s.live()), Math.max(p[1], s.inState()), Math.max(p[2], s.heapBytes())
              });
      return s;
    } catch (RuntimeException e) {
      return latest.get();
    }
  }

  Sample latest() {
    return latest.get();
  }

  /** The peaks of live jobs, jobs in state and heap bytes since the last call; resets them. */
  double[] takePeaks() {
    return peaks.getAndSet(new double[3]);
  }

  static Sample parse(String text) {
    double heap = 0;
    double[] v = new double[8];
    String[] names = {
      "kairos_jobs_pending",
      "kairos_jobs_running",
      "kairos_jobs_in_state",
      "kairos_snapshots_written",
      "kairos_snapshot_last_ms",
      "kairos_snapshot_max_ms",
      "kairos_snapshot_last_jobs",
      "kairos_accounting_unwritten"
    };
    for (String line : text.split("\n")) {
      if (line.startsWith("#") || line.isBlank()) {
        continue;
      }
      int space = line.lastIndexOf(' ');
      if (space < 0) {
        continue;
      }
      String key = line.substring(0, space);
      double value;
      try {
        value = Double.parseDouble(line.substring(space + 1).strip());
      } catch (NumberFormatException e) {
        continue;
      }
      if (key.startsWith("jvm_memory_used_bytes{") && key.contains("area=\"heap\"")) {
        heap += value;
        continue;
      }
      int brace = key.indexOf('{');
      String name = brace < 0 ? key : key.substring(0, brace);
      for (int i = 0; i < names.length; i++) {
        if (names[i].equals(name)) {
          v[i] = value;
        }
      }
    }
    return new Sample(v[0], v[1], v[2], heap, v[3], v[4], v[5], v[6], v[7]);
  }
}

package io.kairos.control.dashboard;

import io.kairos.control.Fatal;
import io.kairos.control.accounting.AccountingStore;
import io.kairos.control.raft.RaftReplica;
import io.kairos.control.state.ControlState;
import io.kairos.control.state.JobRecord;
import io.kairos.control.state.NodeRecord;
import io.kairos.protocol.JobState;
import io.kairos.protocol.NodeState;
import io.kairos.protocol.TaskPlacement;
import java.io.Closeable;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Samples the cluster's load into a {@link UtilizationHistory} every {@code interval} (10 s by
 * default), and keeps each sample in the accounting store, so the history outlives the process and
 * a change of leader.
 *
 * <p>Who samples: the leader. With PostgreSQL (one store for the group) only the leader writes, and
 * a replica that becomes leader first rebuilds its history from the store, so it shows what the
 * previous leader recorded. With the embedded SQLite store (a file per replica) every replica that
 * hears a leader samples its own copy of the replicated state into its own file, so whichever
 * replica leads next already has the history. A replica that starts rebuilds from its store;
 * samples older than 14 days ({@link UtilizationHistory#MAX_WINDOW}) are deleted.
 *
 * <p>A sample reads the replicated state once under its read lock: the GPUs of nodes that are not
 * DOWN, the GPUs running jobs hold, the pending and running jobs, and the jobs that started or
 * ended since the previous sample. The last scans every job the state keeps (a few milliseconds for
 * a million).
 */
public final class UtilizationSampler implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(UtilizationSampler.class);
  public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(10);

  private static final Duration PRUNE_EVERY = Duration.ofHours(1);

  private final RaftReplica replica;
  private final UtilizationHistory history;
  private final AccountingStore store;
  private final InstantSource clock;
  private final Duration interval;
  private volatile boolean closed;
  private Thread thread;
  private long lastSampleMs = -1;
  private boolean wasLeader;
  private long lastPruneMs = -1;

  /**
   * A sampler writing to {@code store} (the replica's accounting store) as well as to {@code
   * history}.
   */
  public UtilizationSampler(
      RaftReplica replica,
      UtilizationHistory history,
      AccountingStore store,
      InstantSource clock,
      Duration interval) {
    this.replica = replica;
    this.history = history;
    this.store = java.util.Objects.requireNonNull(store, "store");
    this.clock = clock;
    this.interval = interval;
  }

  public void start() {
    thread =
        Thread.ofPlatform()
            .daemon()
            .name("kairos-utilization-sampler")
            .uncaughtExceptionHandler(Fatal.EXIT)
            .start(this::loop);
  }

  private void loop() {
    rebuild();
    while (!closed) {
      try {
        // Tick at most every second: a new leader samples at once, then every interval.
        Thread.sleep(Math.min(1000, interval.toMillis()));
        tick();
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException e) {
        if (!closed) {
          LOG.warn("utilization sample failed; trying again at the next tick", e);
        }
      }
    }
  }

  /** One tick: sample when this replica should and the interval has passed. */
  void tick() {
    boolean leader = replica.isLeaderReady();
    if (leader && !wasLeader && !store.isEmbedded()) {
      rebuild(); // the previous leader wrote the shared store: show what it recorded
    }
    wasLeader = leader;
    boolean samples = leader || (store.isEmbedded() && replica.leaderUrl().isPresent());
    if (!samples) {
      lastSampleMs = -1;
    } else if (lastSampleMs < 0 || clock.millis() - lastSampleMs >= interval.toMillis()) {
      sampleOnce(leader || store.isEmbedded());
    }
  }

  /** Replaces the history with the store's samples of the last 14 days. */
  void rebuild() {
    long from = clock.millis() - UtilizationHistory.MAX_WINDOW.toMillis();
    try {
      var rows = store.utilizationSince(from);
      history.clear();
      for (AccountingStore.Utilization u : rows) {
        history.record(
            Instant.ofEpochMilli(u.atMs()),
            new UtilizationHistory.Sample(
                u.gpusTotal(), u.gpusBusy(), u.pending(), u.running(), u.started(), u.finished()));
      }
      LOG.info("utilization history: {} samples from the accounting store", rows.size());
    } catch (SQLException e) {
      LOG.warn(
          "utilization history: cannot read the accounting store ({}); starting empty",
          e.getMessage());
    }
  }

  /**
   * Takes one sample now and records it, in the store too when {@code write}. Called by the
   * sampler's thread (and by tests).
   */
  void sampleOnce(boolean write) {
    Instant now = clock.instant();
    long nowMs = now.toEpochMilli();
    long sinceMs = lastSampleMs < 0 ? nowMs - interval.toMillis() : lastSampleMs;
    UtilizationHistory.Sample s = replica.stateMachine().read(st -> measure(st, sinceMs, nowMs));
    history.record(now, s);
    lastSampleMs = nowMs;
    if (!write) {
      return;
    }
    try {
      store.writeUtilization(
          new AccountingStore.Utilization(
              nowMs,
              s.gpusTotal(),
              s.gpusBusy(),
              s.pending(),
              s.running(),
              s.started(),
              s.finished()));
      if (lastPruneMs < 0 || nowMs - lastPruneMs >= PRUNE_EVERY.toMillis()) {
        store.pruneUtilization(nowMs - UtilizationHistory.MAX_WINDOW.toMillis());
        lastPruneMs = nowMs;
      }
    } catch (SQLException e) {
      LOG.warn(
          "utilization history: cannot write the sample to the accounting store ({}); it stays"
              + " in memory only",
          e.getMessage());
    }
  }

  /**
   * The load of {@code state}, with starts and ends in {@code (sinceMs, untilMs]}. Pure: the same
   * state and bounds give the same sample.
   */
  public static UtilizationHistory.Sample measure(ControlState state, long sinceMs, long untilMs) {
    long total = 0;
    for (NodeRecord n : state.nodes()) {
      if (n.state != NodeState.DOWN) {
        total += n.registration.gpus().size();
      }
    }
    long busy = 0;
    for (JobRecord j : state.jobsHoldingGpus()) {
      for (TaskPlacement t : j.placement) {
        busy += t.gpus().size();
      }
    }
    long pending = 0;
    long running = 0;
    for (JobRecord j : state.activeJobs()) {
      if (j.state == JobState.PENDING) {
        pending++;
      } else if (j.state == JobState.RUNNING) {
        running++;
      }
    }
    long started = 0;
    long finished = 0;
    for (JobRecord j : state.jobs()) {
      if (j.attempt > 0 && j.startMs > sinceMs && j.startMs <= untilMs) {
        started++;
      }
      if (j.state.isFinal() && j.endMs > sinceMs && j.endMs <= untilMs) {
        finished++;
      }
    }
    return new UtilizationHistory.Sample(total, busy, pending, running, started, finished);
  }

  @Override
  public void close() {
    closed = true;
    if (thread != null) {
      thread.interrupt();
    }
  }
}

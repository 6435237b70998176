package io.kairos.control.dashboard;

import io.kairos.control.Fatal;
import io.kairos.control.raft.RaftReplica;
import io.kairos.control.state.ControlState;
import io.kairos.control.state.JobRecord;
import io.kairos.control.state.NodeRecord;
import io.kairos.protocol.JobState;
import io.kairos.protocol.NodeState;
import io.kairos.protocol.TaskPlacement;
import java.io.Closeable;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Samples the cluster's load into a {@link UtilizationHistory} every {@code interval} (10 s by
 * default), on the leader only: followers and a replica without a leader record nothing, so the
 * history of a new leader starts empty (it is not replicated; see docs/operations.md).
 *
 * <p>A sample reads the replicated state once under its read lock: the GPUs of nodes that are not
 * DOWN, the GPUs running jobs hold, the pending and running jobs, and the jobs that started or
 * ended since the previous sample. The last scans every job the state keeps (a few milliseconds for
 * a million).
 */
public final class UtilizationSampler implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(UtilizationSampler.class);
  public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(10);

  private final RaftReplica replica;
  private final UtilizationHistory history;
  private final InstantSource clock;
  private final Duration interval;
  private volatile boolean closed;
  private Thread thread;
  private long lastSampleMs = -1;

  public UtilizationSampler(
      RaftReplica replica, UtilizationHistory history, InstantSource clock, Duration interval) {
    this.replica = replica;
    this.history = history;
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
    while (!closed) {
      try {
        // Tick at most every second: a new leader samples at once, then every interval.
        Thread.sleep(Math.min(1000, interval.toMillis()));
        if (!replica.isLeaderReady()) {
          lastSampleMs = -1;
        } else if (lastSampleMs < 0 || clock.millis() - lastSampleMs >= interval.toMillis()) {
          sampleOnce();
        }
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException e) {
        if (!closed) {
          LOG.warn("utilization sample failed; trying again at the next tick", e);
        }
      }
    }
  }

  /** Takes one sample now and records it. Called by the sampler's thread (and by tests). */
  void sampleOnce() {
    Instant now = clock.instant();
    long nowMs = now.toEpochMilli();
    long sinceMs = lastSampleMs < 0 ? nowMs - interval.toMillis() : lastSampleMs;
    UtilizationHistory.Sample s = replica.stateMachine().read(st -> measure(st, sinceMs, nowMs));
    history.record(now, s);
    lastSampleMs = nowMs;
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

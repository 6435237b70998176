package io.kairos.control.raft;

import io.kairos.control.Fatal;
import io.kairos.control.state.ControlCommand.SubmitJobs;
import io.kairos.control.state.ControlResult;
import io.kairos.control.state.JobRequest;
import java.io.Closeable;
import java.io.IOException;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Packs concurrent submissions into one {@link SubmitJobs} log entry, so that thousands of submits
 * per second cost tens of log writes, not thousands (group commit).
 *
 * <p>A single thread drains the queue: it takes whatever is waiting (up to {@link
 * #MAX_JOBS_PER_ENTRY} jobs), proposes it, and goes on without waiting for the commit. Group
 * commit: while an entry is in flight ({@link #EAGER_IN_FLIGHT}), the next one waits for its
 * commit, gathering the submits that arrive meanwhile, unless {@link #FULL_ENTRY} submits are
 * already waiting; at most {@link #MAX_IN_FLIGHT} entries are in flight. So a submit alone is its
 * own entry and waits for nothing, a steady stream of separate submits (1,000 a second) shares
 * entries (each entry, with its fsync and its replication, costs far more than a job in it), and a
 * heavy load still keeps the log busy with several large entries. Each caller's future completes
 * with its own ids once the entry is committed and applied.
 *
 * <p>Each caller's jobs are one group of the entry ({@link SubmitJobs#groups}): the state machine
 * admits or refuses them as a whole against the limits, and a refused caller's future fails with
 * {@link Refused}.
 */
public final class SubmitBatcher implements Closeable {
  static final int MAX_JOBS_PER_ENTRY = 2_000;
  static final int MAX_IN_FLIGHT = 8;

  /** Entries proposed at once without waiting for a commit. */
  static final int EAGER_IN_FLIGHT = 1;

  /** Submits waiting that make an entry worth proposing past {@link #EAGER_IN_FLIGHT}. */
  static final int FULL_ENTRY = 16;

  private record Pending(List<JobRequest> jobs, CompletableFuture<List<Long>> done) {}

  /** A limit refused the submit as a whole: no job was made. */
  public static final class Refused extends Exception {
    private static final long serialVersionUID = 1L;
    private final transient ControlResult.Refusal refusal;

    Refused(ControlResult.Refusal refusal) {
      super(refusal.limit() + " " + refusal.value(), null, false, false);
      this.refusal = refusal;
    }

    public ControlResult.Refusal refusal() {
      return refusal;
    }
  }

  private final RaftReplica replica;
  private final InstantSource clock;
  private final LinkedBlockingQueue<Pending> queue = new LinkedBlockingQueue<>();

  /** Guards {@link #inFlight}; notified when an entry completes or the queue fills. */
  private final Object gate = new Object();

  private int inFlight;
  private final Thread drainer;
  private volatile boolean closed;

  public SubmitBatcher(RaftReplica replica, InstantSource clock) {
    this.replica = replica;
    this.clock = clock;
    this.drainer =
        Thread.ofPlatform()
            .name("kairos-submit-batcher")
            .daemon()
            .uncaughtExceptionHandler(Fatal.EXIT)
            .start(this::drain);
  }

  /** Queues jobs for the next entry; completes with their ids, in order. */
  public CompletableFuture<List<Long>> submit(List<JobRequest> jobs) {
    var done = new CompletableFuture<List<Long>>();
    if (closed) {
      done.completeExceptionally(new IOException("the controller is shutting down"));
      return done;
    }
    queue.add(new Pending(List.copyOf(jobs), done));
    if (queue.size() == FULL_ENTRY) {
      synchronized (gate) {
        gate.notifyAll();
      }
    }
    return done;
  }

  private void drain() {
    var batch = new ArrayList<Pending>();
    while (!closed) {
      try {
        Pending first = queue.poll(200, TimeUnit.MILLISECONDS);
        if (first == null) {
          continue;
        }
        awaitTurn();
        batch.add(first);
        int jobs = first.jobs().size();
        Pending next;
        while (jobs < MAX_JOBS_PER_ENTRY && (next = queue.poll()) != null) {
          batch.add(next);
          jobs += next.jobs().size();
        }
        propose(List.copyOf(batch), jobs);
        batch.clear();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /** Waits until an entry may be proposed (see the class comment), and counts it in flight. */
  private void awaitTurn() throws InterruptedException {
    synchronized (gate) {
      while (inFlight >= MAX_IN_FLIGHT
          || inFlight >= EAGER_IN_FLIGHT && queue.size() + 1 < FULL_ENTRY) {
        gate.wait(50); // notified on a commit or a full queue; the timeout is a safety net
      }
      inFlight++;
    }
  }

  private void landed() {
    synchronized (gate) {
      inFlight--;
      gate.notifyAll();
    }
  }

  private void propose(List<Pending> batch, int jobCount) {
    var all = new ArrayList<JobRequest>(jobCount);
    var groups = new ArrayList<Integer>(batch.size());
    for (Pending p : batch) {
      all.addAll(p.jobs());
      groups.add(p.jobs().size());
    }
    CompletableFuture<ControlResult> proposed;
    try {
      proposed = replica.propose(new SubmitJobs(clock.millis(), all, groups));
    } catch (RuntimeException e) {
      proposed = CompletableFuture.failedFuture(e);
    }
    proposed.whenComplete(
        (result, error) -> {
          landed();
          if (error != null) {
            batch.forEach(p -> p.done().completeExceptionally(error));
            return;
          }
          distribute(batch, result);
        });
  }

  private static void distribute(List<Pending> batch, ControlResult result) {
    var refused = new java.util.HashMap<Integer, ControlResult.Refusal>();
    for (ControlResult.Refusal r : result.refused()) {
      refused.put(r.group(), r);
    }
    int at = 0;
    for (int g = 0; g < batch.size(); g++) {
      Pending p = batch.get(g);
      ControlResult.Refusal refusal = refused.get(g);
      if (refusal != null) {
        p.done().completeExceptionally(new Refused(refusal));
        continue;
      }
      int n = p.jobs().stream().mapToInt(JobRequest::jobCount).sum();
      p.done().complete(List.copyOf(result.ids().subList(at, at + n)));
      at += n;
    }
  }

  @Override
  public void close() {
    closed = true;
    drainer.interrupt();
    Pending p;
    while ((p = queue.poll()) != null) {
      p.done().completeExceptionally(new IOException("the controller is shutting down"));
    }
  }
}

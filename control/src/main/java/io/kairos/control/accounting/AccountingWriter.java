package io.kairos.control.accounting;

import io.kairos.control.Fatal;
import io.kairos.control.raft.RaftReplica;
import io.kairos.control.state.ControlCommand.ForgetJobs;
import io.kairos.control.state.ControlState;
import io.kairos.control.state.JobRecord;
import io.kairos.control.state.NodeRecord;
import io.kairos.protocol.GpuDevice;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.Closeable;
import java.sql.SQLException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves ended jobs from the replicated state to the {@link AccountingStore}.
 *
 * <p>Design note. Every tick it writes the ended jobs that hold no GPUs and that it has not written
 * yet (upserts: writing one twice changes nothing); then, on the leader only, it proposes a {@link
 * ForgetJobs} for those it has written itself that are past the retention (older than {@code
 * retainFinished}, or beyond the {@code retainFinishedCount} most recently ended). So a job leaves
 * the replicated state only once its record is durably in the store, whoever leads: a new leader
 * writes what it finds before it forgets anything, and a record written twice by two leaders is one
 * row. With PostgreSQL (one store for the group) only the leader writes; with the embedded SQLite
 * store each replica writes its own file, and the state machine also writes what a {@link
 * ForgetJobs} removes before the entry counts as applied ({@link #keepForgotten}), so a follower's
 * store misses nothing it applied.
 */
public final class AccountingWriter implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(AccountingWriter.class);

  /** The most jobs one write (one transaction) or one {@link ForgetJobs} entry holds. */
  static final int BATCH = 2_000;

  private final RaftReplica replica;
  private final AccountingStore store;
  private final AccountingSettings settings;
  private final InstantSource clock;
  private final Duration tick;

  /** Job ids this process wrote to the store (pruned once the state has forgotten them). */
  private final ConcurrentHashMap<Long, Boolean> written = new ConcurrentHashMap<>();

  /**
   * The state whose retired jobs up to {@link #cursor} (their retirement number) are all written: a
   * tick looks only at those retired since, not at every ended job kept (a walk of all of them per
   * tick was 3-5% of the controller's CPU in the turnover benchmark). Another state object (a
   * snapshot was loaded) starts again from 0.
   */
  private ControlState cursorState; // guarded by this

  private long cursor; // guarded by this

  private final Counter writtenJobs;
  private final Counter failures;
  private volatile boolean closed;
  private volatile long unwritten;
  private Thread thread;

  public AccountingWriter(
      RaftReplica replica,
      AccountingStore store,
      AccountingSettings settings,
      InstantSource clock,
      Duration tick,
      MeterRegistry meters) {
    this.replica = replica;
    this.store = store;
    this.settings = settings;
    this.clock = clock;
    this.tick = tick;
    this.writtenJobs =
        Counter.builder("kairos.accounting.written")
            .description("ended jobs written to the accounting store by this replica")
            .register(meters);
    this.failures =
        Counter.builder("kairos.accounting.failures")
            .description("writes to the accounting store that failed (retried at the next tick)")
            .register(meters);
    Gauge.builder("kairos.accounting.unwritten", this, w -> (double) w.unwritten)
        .description("ended jobs in the replicated state not yet in the accounting store")
        .register(meters);
  }

  /** Hooks the embedded store into the state machine: forgotten jobs are written on apply. */
  public void attach() {
    if (store.isEmbedded()) {
      replica.stateMachine().onForgotten(this::keepForgotten);
    }
  }

  public void start() {
    thread =
        Thread.ofPlatform()
            .daemon()
            .name("kairos-accounting-writer")
            .uncaughtExceptionHandler(Fatal.EXIT)
            .start(this::loop);
  }

  private void loop() {
    while (!closed) {
      try {
        Thread.sleep(tick.toMillis());
        runOnce();
      } catch (InterruptedException e) {
        return;
      } catch (SQLException e) {
        failures.increment();
        LOG.warn(
            "the accounting store ({}) cannot be written: {}; ended jobs stay in the replicated"
                + " state until it can",
            store.where(),
            AccountingStore.rootMessage(e));
      } catch (RuntimeException e) {
        if (!closed) {
          failures.increment();
          LOG.warn("accounting tick failed; trying again at the next tick", e);
        }
      }
    }
  }

  /**
   * One tick: write what is not written yet, then (leader) forget what is past the retention.
   * Called by the writer's thread, and by tests.
   */
  public void runOnce() throws SQLException, InterruptedException {
    boolean leader = replica.isLeaderReady();
    if (!leader && !store.isEmbedded()) {
      return;
    }
    flush();
    if (leader) {
      forgetRetained();
    }
  }

  /**
   * Writes the ended jobs this replica's state holds that are not in the store yet (no forgetting):
   * what a history read calls first, so it sees jobs that ended a moment ago. Safe on any replica
   * and beside the writer's own tick (writes are idempotent).
   */
  public void flush() throws SQLException {
    for (int round = 0; round < 1_000 && !closed; round++) {
      // Under the read lock only the picking (references and the nodes' GPU lists); the rows,
      // with each record's JSON, are built after it: the apply thread waits for this lock, and
      // 2,000 records' JSON took it tens of ms (ended jobs are not changed again, only forgotten).
      Unwritten picked = replica.stateMachine().read(this::unwrittenBatch);
      if (picked.jobs().isEmpty()) {
        advance(picked);
        return;
      }
      var batch = new ArrayList<AccountedJob>(picked.jobs().size());
      for (JobRecord j : picked.jobs()) {
        batch.add(AccountedJob.of(j, picked.gpus()::get));
      }
      store.write(batch);
      batch.forEach(a -> written.put(a.job().id, Boolean.TRUE));
      writtenJobs.increment(batch.size());
      advance(picked);
    }
  }

  /**
   * Ended jobs picked for a write, the GPUs of the nodes they ran on (as registered), and the
   * retirement number ({@link ControlState#retiredSince}) through which every retired job of {@code
   * state} is written once these are.
   */
  private record Unwritten(
      List<JobRecord> jobs,
      java.util.Map<String, List<GpuDevice>> gpus,
      ControlState state,
      long through) {}

  private synchronized long cursorFor(ControlState st) {
    if (st != cursorState) {
      cursorState = st;
      cursor = 0;
    }
    return cursor;
  }

  /** After {@code picked} is in the store: what the next tick need not look at again. */
  private synchronized void advance(Unwritten picked) {
    if (picked.state() == cursorState && picked.through() > cursor) {
      cursor = picked.through();
    }
  }

  /**
   * Up to {@link #BATCH} ended jobs not written yet, in the order they retired, with their nodes'
   * GPUs; prunes {@link #written}.
   */
  private Unwritten unwrittenBatch(ControlState st) {
    var out = new ArrayList<JobRecord>();
    var gpus = new java.util.HashMap<String, List<GpuDevice>>();
    long left = 0;
    long through = cursorFor(st);
    boolean contiguous = true; // every job retired through `through` is written or picked
    for (var e : st.retiredSince(through).entrySet()) {
      JobRecord j = e.getValue();
      if (!written.containsKey(j.id)) {
        left++;
        if (out.size() < BATCH) {
          out.add(j);
          nodesOf(j).forEach(n -> gpus.computeIfAbsent(n, node -> gpusOf(st, node)));
        } else {
          contiguous = false;
        }
      }
      if (contiguous) {
        through = e.getKey();
      }
    }
    unwritten = left;
    if (written.size() > st.retiredJobs().size()) {
      written.keySet().removeIf(id -> st.job(id).isEmpty());
    }
    return new Unwritten(out, gpus, st, through);
  }

  /** Every node the job's attempts ran on. */
  private static List<String> nodesOf(JobRecord j) {
    var nodes = new ArrayList<String>();
    for (var a : j.pastAttempts) {
      a.placement().forEach(t -> nodes.add(t.node()));
    }
    j.placement.forEach(t -> nodes.add(t.node()));
    return nodes;
  }

  private static List<GpuDevice> gpusOf(ControlState st, String node) {
    NodeRecord n = st.node(node).orElse(null);
    return n == null || n.registration == null ? null : n.registration.gpus();
  }

  /** Proposes forgetting the written jobs past the retention, in entries of {@link #BATCH}. */
  private void forgetRetained() throws InterruptedException {
    long cutoff = clock.millis() - settings.retainFinished().toMillis();
    List<Long> ids =
        replica
            .stateMachine()
            .read(
                st -> {
                  var out = new ArrayList<Long>();
                  var retired = st.retiredJobs();
                  long beyondCount = retired.size() - settings.retainFinishedCount();
                  long i = 0;
                  for (JobRecord j : retired) {
                    if (i++ >= beyondCount && j.endMs > cutoff) {
                      break; // the rest ended later still
                    }
                    if (written.containsKey(j.id) && st.isForgettable(j)) {
                      out.add(j.id);
                    }
                  }
                  return out;
                });
    for (int from = 0; from < ids.size() && !closed; from += BATCH) {
      var part = ids.subList(from, Math.min(ids.size(), from + BATCH));
      try {
        replica.propose(new ForgetJobs(clock.millis(), part)).get(10, TimeUnit.SECONDS);
      } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
        LOG.debug("forgetting {} ended jobs was not committed: {}", part.size(), e.toString());
        return; // lost the lead, or slow: the next tick tries again
      }
    }
  }

  /**
   * The state machine forgot these jobs (a {@link ForgetJobs}, or the ended-jobs limit): the ones
   * this replica has not written yet go to its embedded store now, on the apply thread.
   */
  void keepForgotten(ControlState st, List<JobRecord> jobs) throws SQLException {
    var missing = new ArrayList<AccountedJob>();
    for (JobRecord j : jobs) {
      if (written.remove(j.id) == null) {
        missing.add(AccountedJob.of(j, node -> gpusOf(st, node)));
      }
    }
    store.write(missing);
  }

  @Override
  public void close() {
    closed = true;
    if (thread != null) {
      thread.interrupt();
      try {
        thread.join(5_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}

package io.kairos.control.agent;

import io.kairos.control.api.ApiError;
import io.kairos.control.auth.Tokens;
import io.kairos.control.raft.RaftReplica;
import io.kairos.control.sched.SchedulerLoop;
import io.kairos.control.state.JobRecord;
import io.kairos.control.state.TokenRecord;
import io.kairos.protocol.JobState;
import io.kairos.protocol.agent.TaskAssignment;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The step credentials the leader hands to launched tasks ({@link AgentService}): one per job
 * attempt, its hash committed ({@code AddToken}) before the token goes out, the token kept in
 * memory for the attempt's later launches. Minting never waits a flush of its own when it can share
 * one: the scheduler's starts bring their credentials in the same flush ({@link #premint}), and a
 * heartbeat proposes all it needs at once. Thread-safe.
 */
final class StepCredentials {
  private final RaftReplica replica;
  private final InstantSource clock;

  /** Credentials proposed together share entries ({@code AddTokens}). */
  private final io.kairos.control.raft.TokenBatcher tokens;

  /** Step credentials this leader minted, by job and attempt ({@code id:attempt}). Secrets. */
  private final Map<String, String> jobTokens = new ConcurrentHashMap<>();

  /** Step credentials being committed, by job and attempt. */
  private final Map<String, CompletableFuture<String>> minting = new ConcurrentHashMap<>();

  StepCredentials(RaftReplica replica, InstantSource clock) {
    this.replica = replica;
    this.clock = clock;
    this.tokens = new io.kairos.control.raft.TokenBatcher(replica, clock);
  }

  void close() {
    tokens.close();
  }

  /** The credential minted for the job's current attempt, or null. */
  String tokenOf(JobRecord job) {
    return jobTokens.get(job.id + ":" + job.attempt);
  }

  /**
   * Mints the step credential of each job attempt launched without one; true when it minted any
   * (the plan must be made again to carry them).
   */
  boolean mint(List<TaskAssignment> launches) throws InterruptedException {
    boolean minted = false;
    var wanted = new java.util.LinkedHashMap<String, TaskAssignment>();
    for (TaskAssignment a : launches) {
      if (a.jobToken() == null) {
        wanted.putIfAbsent(a.jobId() + ":" + a.attempt(), a);
      }
    }
    // Two rounds: a credential the scheduler proposed (premint) may have been refused if it
    // reached the log before its start; the launch needs one, so it is minted again.
    for (int round = 0; round < 2 && !wanted.isEmpty(); round++) {
      var waits = new java.util.LinkedHashMap<String, CompletableFuture<String>>();
      for (var e : wanted.entrySet()) {
        String key = e.getKey();
        if (jobTokens.containsKey(key)) {
          minted = true;
          continue;
        }
        // Proposed together, the attempts' credentials share the log's flushes; a heartbeat of
        // another node of the gang, or the scheduler's premint, may already be minting it.
        var fresh = new CompletableFuture<String>();
        var existing = minting.putIfAbsent(key, fresh);
        if (existing == null) {
          TaskAssignment a = e.getValue();
          mint(key, a.jobId(), a.attempt(), a.user(), fresh);
        }
        waits.put(key, existing == null ? fresh : existing);
      }
      wanted.clear();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      for (var w : waits.entrySet()) {
        try {
          long left = Math.max(0, deadline - System.nanoTime());
          if (w.getValue().get(left, TimeUnit.NANOSECONDS) != null) {
            minted = true;
          } else if (round == 0) {
            wanted.put(w.getKey(), launchOf(launches, w.getKey()));
          }
        } catch (ExecutionException | TimeoutException e) {
          throw ApiError.unavailable("could not commit a step credential: " + e.getMessage());
        }
      }
    }
    return minted;
  }

  private static TaskAssignment launchOf(List<TaskAssignment> launches, String key) {
    for (TaskAssignment a : launches) {
      if (key.equals(a.jobId() + ":" + a.attempt())) {
        return a;
      }
    }
    throw new IllegalStateException("no launch for " + key);
  }

  /**
   * For the scheduler's {@link SchedulerLoop.StartHook}: each job about to start gets its step
   * credential proposed right after its start (same flush), so that the heartbeat that launches it
   * waits for no commit of its own. A credential refused (the start went stale) is minted again by
   * the heartbeat that needs it, if any.
   */
  Runnable premint(List<SchedulerLoop.StartHook.Starting> jobs) {
    var proposals = new ArrayList<Runnable>(jobs.size());
    for (var j : jobs) {
      String key = j.jobId() + ":" + j.attempt();
      var placeholder = new CompletableFuture<String>();
      if (jobTokens.containsKey(key) || minting.putIfAbsent(key, placeholder) != null) {
        continue;
      }
      proposals.add(() -> mint(key, j.jobId(), j.attempt(), j.user(), placeholder));
    }
    return () -> proposals.forEach(Runnable::run);
  }

  /**
   * Proposes one attempt's step credential and completes {@code done} (its entry in {@link
   * #minting}, which it then leaves) with the token once committed (kept), or null if refused.
   */
  private void mint(
      String key, long jobId, int attempt, String user, CompletableFuture<String> done) {
    String token = Tokens.generate("kstep");
    var record =
        TokenRecord.stepCredential(
            Tokens.hash(token), user, clock.millis(), TokenRecord.jobScope(jobId, attempt));
    tokens
        .add(record)
        .whenComplete(
            (r, e) -> {
              if (e == null && r.isOk()) {
                jobTokens.put(key, token);
              }
              minting.remove(key, done);
              if (e != null) {
                done.completeExceptionally(e);
              } else {
                done.complete(r.isOk() ? token : null);
              }
            });
  }

  /** Forgets the credentials of attempts that no longer run (the state dropped their hashes). */
  void prune() {
    if (jobTokens.isEmpty()) {
      return;
    }
    jobTokens
        .keySet()
        .removeIf(
            key -> {
              long id = Long.parseLong(key.substring(0, key.indexOf(':')));
              int attempt = Integer.parseInt(key.substring(key.indexOf(':') + 1));
              return replica
                  .stateMachine()
                  .read(
                      s ->
                          s.job(id)
                              .map(j -> j.state != JobState.RUNNING || j.attempt != attempt)
                              .orElse(true));
            });
  }
}

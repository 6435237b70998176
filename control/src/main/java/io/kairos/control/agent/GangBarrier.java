package io.kairos.control.agent;

import io.kairos.control.raft.RaftReplica;
import io.kairos.control.state.ElasticResizes;
import io.kairos.control.state.JobRecord;
import io.kairos.protocol.JobState;
import io.kairos.protocol.agent.Heartbeat;
import io.kairos.protocol.agent.TaskRef;
import io.kairos.protocol.agent.TaskReport;
import io.kairos.protocol.agent.TaskStatus;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The start barrier of multi-node gangs ({@link AgentService}): each agent prepares its task and
 * reports it READY; once every task of the attempt has, each is told to go.
 *
 * <p>Design note. The ready sets are leader memory, rebuilt from heartbeats after a leader change
 * (agents keep reporting READY until told to go). Two things a new leader cannot rebuild that way
 * are read instead: a rank an elastic grow added to an attempt that has started ({@link
 * ElasticResizes#addedByGrow}, replicated history) goes at once, since the gang it joins is past
 * its barrier (the ranks already running never report READY again, so a rebuilt set would wait for
 * them for ever); and a RUNNING report of a rank of an attempt whose set still waits opens it,
 * since a barrier gang's rank runs only once its barrier has opened (the old leader opened it and
 * some agent did not hear of it before the change).
 */
final class GangBarrier {
  private final RaftReplica replica;

  /** Ready tasks of barrier gangs, by job; the attempt they belong to is kept with them. */
  private final Map<Long, Ready> ready = new ConcurrentHashMap<>();

  private static final class Ready {
    final int attempt;
    final int tasks;
    final BitSet ranks = new BitSet();
    boolean released;

    Ready(int attempt, int tasks) {
      this.attempt = attempt;
      this.tasks = tasks;
    }
  }

  /** What the state says of a reported rank: its attempt, the gang's size, whether grown. */
  private record Rank(int attempt, int tasks, boolean grown) {}

  GangBarrier(RaftReplica replica) {
    this.replica = replica;
  }

  /**
   * Records this heartbeat's READY tasks and returns those whose gang is complete. A gang that just
   * completed wakes every other held heartbeat, so its other agents hear at once.
   */
  List<TaskRef> go(Heartbeat hb) {
    List<TaskRef> go = null;
    boolean completed = false;
    for (TaskReport r : hb.tasks()) {
      if (r.step() != null) {
        continue;
      }
      if (r.status() == TaskStatus.RUNNING) {
        completed |= runs(hb, r);
        continue;
      }
      if (r.status() != TaskStatus.READY) {
        continue;
      }
      // Only a task of the current attempt placed on this node counts: a rank outside the gang
      // or another node's rank must neither open the barrier nor fail the heartbeat.
      Optional<Rank> current = current(hb, r);
      if (current.isEmpty()) {
        continue; // the reconciler kills it
      }
      Ready set;
      synchronized (ready) {
        set =
            ready.compute(
                r.jobId(),
                (id, old) ->
                    old == null || old.attempt != current.get().attempt()
                        ? new Ready(current.get().attempt(), current.get().tasks())
                        : old);
        set.ranks.set(r.task());
        if (!set.released && set.ranks.cardinality() == set.tasks) {
          set.released = true;
          completed = true;
        }
      }
      if (set.released || current.get().grown()) {
        if (go == null) {
          go = new ArrayList<>();
        }
        go.add(new TaskRef(r.jobId(), r.attempt(), r.task()));
      }
    }
    if (completed) {
      replica.stateMachine().watch().poke();
    }
    return go == null ? List.of() : go;
  }

  /**
   * A RUNNING report of a current rank: its attempt's barrier has opened, so its set is released
   * (true when that opens a set that waited). Read once per attempt on a leader; after that a set
   * released for the attempt answers from memory.
   */
  private boolean runs(Heartbeat hb, TaskReport r) {
    Ready known = ready.get(r.jobId());
    if (known != null && known.released && known.attempt == r.attempt()) {
      return false;
    }
    Optional<Rank> current = current(hb, r);
    if (current.isEmpty()) {
      return false;
    }
    synchronized (ready) {
      Ready set =
          ready.compute(
              r.jobId(),
              (id, old) ->
                  old == null || old.attempt != current.get().attempt()
                      ? new Ready(current.get().attempt(), current.get().tasks())
                      : old);
      boolean waited = !set.released && !set.ranks.isEmpty();
      set.released = true;
      return waited;
    }
  }

  private Optional<Rank> current(Heartbeat hb, TaskReport r) {
    return replica
        .stateMachine()
        .read(
            s ->
                s.job(r.jobId())
                    .filter(j -> placedHere(j, hb, r))
                    .map(
                        j ->
                            new Rank(
                                j.attempt,
                                j.placement.size(),
                                ElasticResizes.addedByGrow(j, r.task()))));
  }

  private static boolean placedHere(JobRecord j, Heartbeat hb, TaskReport r) {
    return j.state == JobState.RUNNING
        && !j.requeueing
        && j.attempt == r.attempt()
        && r.task() >= 0
        && r.task() < j.placement.size()
        && j.placement.get(r.task()).node().equals(hb.node());
  }

  /** Forgets the sets of attempts that no longer run. */
  void prune() {
    if (ready.isEmpty()) {
      return;
    }
    synchronized (ready) {
      ready
          .entrySet()
          .removeIf(
              e ->
                  replica
                      .stateMachine()
                      .read(
                          s ->
                              s.job(e.getKey())
                                  .map(
                                      j ->
                                          j.state != JobState.RUNNING
                                              || j.requeueing
                                              || j.attempt != e.getValue().attempt)
                                  .orElse(true)));
    }
  }
}

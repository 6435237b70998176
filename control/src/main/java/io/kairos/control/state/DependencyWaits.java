package io.kairos.control.state;

import io.kairos.protocol.JobState;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.LongFunction;

/**
 * The pending jobs whose dependencies do not hold yet, kept out of the scheduler's store, and what
 * each one waits for. Derived from the records: {@link QueueGates} rebuilds it with the store, and
 * the {@link JobLifecycle} keeps it in step by telling it which jobs started or ended.
 *
 * <p>A job depends only on earlier jobs (lower ids): a clause naming its own id or a later one can
 * never hold. So there are no cycles, and a verdict never changes as later jobs arrive.
 *
 * <p>Every state a clause looks at is final once reached (a job that started keeps having started;
 * SUCCEEDED, FAILED and CANCELLED never change), so each clause keeps a cursor: the jobs before it
 * are known to hold, and are not looked at again. A job waiting on a whole array of n elements
 * costs O(n) over the array's life, not per element that ends.
 */
final class DependencyWaits {
  enum Verdict {
    HOLDS,
    WAITS,
    NEVER
  }

  /** A verdict, with the reason in words when the dependency can never hold. */
  record Outcome(Verdict verdict, String why) {}

  /** One clause of a waiting job: its jobs as id ranges, and how far they are known to hold. */
  private static final class ClauseState {
    final Dependency.Clause clause;

    /** The waiting job: it may depend only on earlier jobs. */
    final long self;

    final long[] from;
    final long[] to;
    int range;
    long next;
    String never;

    /** A rebuild's clause: a job no longer kept held already (see {@link #open}). */
    final boolean forgottenHold;

    ClauseState(
        Dependency.Clause clause, long self, long[] from, long[] to, boolean forgottenHold) {
      this.clause = clause;
      this.self = self;
      this.from = from;
      this.to = to;
      this.next = from[0];
      this.forgottenHold = forgottenHold;
    }

    boolean covers(long id) {
      for (int i = 0; i < from.length; i++) {
        if (id >= from[i] && id <= to[i]) {
          return true;
        }
      }
      return false;
    }
  }

  private record Wait(JobRecord job, List<ClauseState> clauses) {}

  private final LongFunction<JobRecord> jobs;
  private final TreeMap<Long, Wait> waiting = new TreeMap<>();

  /** For each job id a clause names (an array's id for a whole array), the jobs waiting on it. */
  private final TreeMap<Long, TreeSet<Long>> dependents = new TreeMap<>();

  DependencyWaits(LongFunction<JobRecord> jobs) {
    this.jobs = jobs;
  }

  void clear() {
    waiting.clear();
    dependents.clear();
  }

  boolean contains(long jobId) {
    return waiting.containsKey(jobId);
  }

  int size() {
    return waiting.size();
  }

  /** Whether a clause of a waiting job names {@code jobId} (a job, or an array's id). */
  boolean names(long jobId) {
    return dependents.containsKey(jobId);
  }

  /**
   * Looks at a pending job's dependency from scratch. When it waits, the job is kept here;
   * otherwise nothing is kept, unless {@code rebuilding} (a rebuild, which must not change the
   * records) and it can never hold.
   *
   * <p>When {@code rebuilding}, a named job the records no longer hold (an earlier id, so it
   * existed) counts as holding: ended jobs are forgotten only when no waiting job names them, so a
   * pending job naming one is one whose dependency held already (it was queued, or ran and was
   * requeued), as the live state, which never looks at it again, has it.
   */
  Outcome open(JobRecord job, boolean rebuilding) {
    boolean keepNever = rebuilding;
    if (!rebuilding) {
      String gone = forgottenName(job);
      if (gone != null) {
        // Never admit a job naming a forgotten one: a rebuild counts those as held (see above).
        return new Outcome(Verdict.NEVER, gone);
      }
    }
    var clauses = new ArrayList<ClauseState>();
    for (Dependency.Clause c : job.request.dependency().clauses()) {
      var from = new long[c.jobs().size()];
      var to = new long[c.jobs().size()];
      for (int i = 0; i < from.length; i++) {
        long id = c.jobs().get(i);
        JobRecord named = jobs.apply(id);
        from[i] = id;
        to[i] =
            named != null && named.array != null && named.array.arrayJobId() == id
                ? named.array.lastJobId()
                : id;
      }
      var cs = new ClauseState(c, job.id, from, to, rebuilding);
      // Any job that can never satisfy the clause, wherever it is in the list.
      for (int i = 0; i < from.length && cs.never == null; i++) {
        for (long id = from[i]; id <= to[i] && cs.never == null; id++) {
          cs.never = neverWhy(cs, id);
        }
      }
      clauses.add(cs);
    }
    var wait = new Wait(job, clauses);
    Outcome outcome = verdict(wait, -1);
    if (outcome.verdict() == Verdict.WAITS || (keepNever && outcome.verdict() == Verdict.NEVER)) {
      waiting.put(job.id, wait);
      for (ClauseState cs : clauses) {
        for (long named : cs.clause.jobs()) {
          dependents.computeIfAbsent(named, k -> new TreeSet<>()).add(job.id);
        }
      }
    }
    return outcome;
  }

  /**
   * Why a new job's dependency names a job the records no longer hold (it ended and was forgotten,
   * or it is an element of a named array that was), or null when it names none. Only earlier ids: a
   * later one never existed when the job was submitted.
   */
  private String forgottenName(JobRecord job) {
    for (long id : job.request.dependency().jobs()) {
      if (id >= job.id) {
        continue;
      }
      JobRecord named = jobs.apply(id);
      if (named == null) {
        return "job " + id + " ended long ago and is forgotten (maxEndedJobs)";
      }
      if (named.array != null && named.array.arrayJobId() == id) {
        for (long e = id + 1; e <= named.array.lastJobId() && e < job.id; e++) {
          if (jobs.apply(e) == null) {
            return "job "
                + e
                + " of array "
                + id
                + " ended long ago and is forgotten (maxEndedJobs)";
          }
        }
      }
    }
    return null;
  }

  /**
   * The waiting jobs that may have to be looked at again after {@code changed} started or ended.
   */
  List<Long> affectedBy(JobRecord changed) {
    var out = new TreeSet<Long>();
    var direct = dependents.get(changed.id);
    if (direct != null) {
      out.addAll(direct);
    }
    if (changed.array != null && changed.array.arrayJobId() != changed.id) {
      var whole = dependents.get(changed.array.arrayJobId());
      if (whole != null) {
        out.addAll(whole);
      }
    }
    return List.copyOf(out);
  }

  /** Looks at a waiting job again after job {@code changedId} changed; drops it unless it waits. */
  Outcome recheck(long jobId, long changedId) {
    Wait wait = waiting.get(jobId);
    if (wait == null) {
      return new Outcome(Verdict.HOLDS, null);
    }
    Outcome outcome = verdict(wait, changedId);
    if (outcome.verdict() != Verdict.WAITS) {
      remove(jobId);
    }
    return outcome;
  }

  /** Forgets a waiting job (cancelled, or its dependency decided). */
  boolean remove(long jobId) {
    Wait wait = waiting.remove(jobId);
    if (wait == null) {
      return false;
    }
    for (ClauseState cs : wait.clauses()) {
      for (long named : cs.clause.jobs()) {
        var set = dependents.get(named);
        if (set != null) {
          set.remove(jobId);
          if (set.isEmpty()) {
            dependents.remove(named);
          }
        }
      }
    }
    return true;
  }

  /** What a waiting job waits for, in words: "afterok:5 (job 5 is RUNNING)". */
  Optional<String> detail(long jobId) {
    Wait wait = waiting.get(jobId);
    if (wait == null) {
      return Optional.empty();
    }
    var parts = new ArrayList<String>();
    for (ClauseState cs : wait.clauses()) {
      if (cs.range >= cs.from.length) {
        continue;
      }
      JobRecord blocking = jobs.apply(cs.next);
      parts.add(
          cs.clause
              + " (job "
              + cs.next
              + " is "
              + (blocking == null ? "unknown" : blocking.state)
              + ")");
    }
    return Optional.of(
        (wait.job().request.dependency().any() ? "any of: " : "")
            + String.join(wait.job().request.dependency().any() ? ", " : "; ", parts));
  }

  private Outcome verdict(Wait wait, long changedId) {
    boolean any = wait.job().request.dependency().any();
    int holds = 0;
    int never = 0;
    String firstNever = null;
    for (ClauseState cs : wait.clauses()) {
      Verdict v = clauseVerdict(cs, changedId);
      if (v == Verdict.HOLDS) {
        holds++;
      } else if (v == Verdict.NEVER) {
        never++;
        firstNever = firstNever == null ? cs.never : firstNever + "; " + cs.never;
      }
    }
    int n = wait.clauses().size();
    if (any) {
      return holds > 0
          ? new Outcome(Verdict.HOLDS, null)
          : never == n ? new Outcome(Verdict.NEVER, firstNever) : new Outcome(Verdict.WAITS, null);
    }
    return never > 0
        ? new Outcome(Verdict.NEVER, firstNever)
        : holds == n ? new Outcome(Verdict.HOLDS, null) : new Outcome(Verdict.WAITS, null);
  }

  private Verdict clauseVerdict(ClauseState cs, long changedId) {
    if (cs.never == null && changedId > 0 && cs.covers(changedId)) {
      cs.never = neverWhy(cs, changedId);
    }
    if (cs.never != null) {
      return Verdict.NEVER;
    }
    while (cs.range < cs.from.length) {
      if (cs.next > cs.to[cs.range]) {
        cs.range++;
        if (cs.range < cs.from.length) {
          cs.next = cs.from[cs.range];
        }
        continue;
      }
      JobRecord d = cs.next >= cs.self ? null : jobs.apply(cs.next);
      Verdict v =
          d == null
              ? (cs.forgottenHold && cs.next < cs.self ? Verdict.HOLDS : Verdict.NEVER)
              : status(cs.clause.kind(), d.state, d.attempt);
      if (v == Verdict.NEVER) {
        cs.never = neverWhy(cs, cs.next);
        return Verdict.NEVER;
      }
      if (v == Verdict.WAITS) {
        return Verdict.WAITS;
      }
      cs.next++;
    }
    return Verdict.HOLDS;
  }

  private String neverWhy(ClauseState cs, long id) {
    if (id >= cs.self) {
      // Ids are given in order, so a later job did not exist when this one was submitted (the
      // API refuses it; the state machine must decide the same whenever it looks).
      return cs.clause + ": job " + id + " did not exist before job " + cs.self;
    }
    JobRecord d = jobs.apply(id);
    if (d == null) {
      return cs.forgottenHold ? null : cs.clause + ": job " + id + " does not exist";
    }
    return status(cs.clause.kind(), d.state, d.attempt) == Verdict.NEVER
        ? cs.clause + ": job " + id + " " + d.state
        : null;
  }

  /** Whether one job named by a clause of {@code kind} satisfies it, in its current state. */
  static Verdict status(Dependency.Kind kind, JobState state, int attempt) {
    return switch (kind) {
      case AFTER -> attempt > 0 || state.isFinal() ? Verdict.HOLDS : Verdict.WAITS;
      case AFTERANY -> state.isFinal() ? Verdict.HOLDS : Verdict.WAITS;
      case AFTEROK ->
          state == JobState.SUCCEEDED
              ? Verdict.HOLDS
              : state.isFinal() ? Verdict.NEVER : Verdict.WAITS;
      case AFTERNOTOK ->
          state == JobState.FAILED || state == JobState.CANCELLED
              ? Verdict.HOLDS
              : state.isFinal() ? Verdict.NEVER : Verdict.WAITS;
    };
  }
}

package io.kairos.core.sched;

import io.kairos.core.model.Cluster;
import io.kairos.core.model.Job;
import io.kairos.core.model.Placement;
import io.kairos.core.model.RunningJob;
import io.kairos.core.sched.backfill.AvailabilityProfile;
import io.kairos.core.sched.backfill.FreeCount;
import io.kairos.core.sched.place.GangPlacer;
import io.kairos.core.sched.place.Ledger;
import io.kairos.core.sched.place.Reservation;
import io.kairos.core.state.ClusterSnapshot;
import io.kairos.core.state.PendingJobs;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * What a pass of a policy with many reservations ({@code conservative}) leaves for the next pass of
 * the same {@link SchedulingPass}: the reservations it made, in order, so that the next pass need
 * not compute again those that cannot have changed. The next pass's decisions and reasons are
 * byte-identical to computing everything afresh; where that is not certain, the cache is not used.
 *
 * <p>Why the reservations cannot change. Take a pass at {@code t0} whose reservations are all
 * floating ({@link Reservation#floating}: a count of GPUs, so only how many GPUs are free at each
 * instant matters) for gangs that need no CPU or memory, and a later pass at {@code t1} that finds
 *
 * <ol>
 *   <li>the same running jobs, less those whose time limits are at or before {@code t1}, plus the
 *       jobs the first pass started, and every GPU free or held by one of them: every job ran
 *       exactly as predicted, so the GPUs free at every instant from {@code t1} on are those the
 *       first pass planned;
 *   <li>the first pass's waiting jobs, up to its last reservation, first in the same order and in
 *       the same state (still held until later, or still unable to ever fit), the started gone;
 *   <li>every one of those reservations at {@code t1} or later.
 * </ol>
 *
 * Then, in order, each reserved job gets the same start again: it still fits then, because every
 * job started after it in the first pass was started only if it left room for it; and it cannot fit
 * earlier, because there is no more room than before. A job whose reservation is {@code t1} starts
 * now, holding what its reservation held. So the later pass replays them and goes on from the job
 * after the last one, with the ledger and free count it would have had. A pass stops reserving once
 * no later job could use the free GPUs, and nothing starts after that point: so when it stops
 * inside the cached jobs, the cached reservations after that point stay valid for the next pass
 * too, though this pass does not report them.
 *
 * <p>Cost of a replay: O(running jobs + cached jobs), all but the replayed ones flat array reads;
 * the running jobs that were running before are recognised by identity (the store keeps one object
 * per run). Recording updates the replayed cache in place: the replayed entries that started are
 * dropped and the rest move up against the entries the pass did not reach, which stay where they
 * are; new entries are appended (issue 16.4: on Philly a pass reaches about 800 of 6,000 cached
 * reservations, and copying all of them every pass cost more than the pass). Not thread-safe, like
 * the pass that holds it.
 */
final class ScheduleCache {
  private static final byte RESERVED = (byte) Reason.RESERVED.ordinal();
  private static final byte BEGIN_TIME = (byte) Reason.BEGIN_TIME.ordinal();
  private static final byte NEVER_FITS = (byte) Reason.NEVER_FITS.ordinal();

  private final Cluster cluster;
  private long nowSec;
  private Running running;
  // The waiting jobs up to the last reservation that did not start, in order, with their reasons
  // and, for RESERVED, their reservations and starts: rank r is at position head + r, for r below
  // size. A later pass updates the arrays in place (record), so a pass costs what it changes.
  private long[] ids;
  private byte[] reasons;
  private Reservation[] reservations;
  private long[] startSec;
  private int head;
  private int size;
  // Positions of the reserved entries by (start, position): the ledger's order.
  private int[] byStart;
  private int byStartCount;
  private FreeCount freeCount;

  /**
   * The running jobs a later pass must find: {@code jobs[i]} for {@code i < fromStore} are the
   * store's own objects (compared by identity), the others were started by the recording pass
   * (compared by job and start). Each with its time limit's end and its GPUs.
   */
  private record Running(RunningJob[] jobs, int fromStore, long[] endSec, int[] gpus) {}

  private ScheduleCache(Cluster cluster, int capacity) {
    this.cluster = cluster;
    this.ids = new long[capacity];
    this.reasons = new byte[capacity];
    this.reservations = new Reservation[capacity];
    this.startSec = new long[capacity];
    this.byStart = new int[capacity];
  }

  /** What {@link #replay} found, for {@link #record}: how far it went, and the running jobs. */
  record Replay(ScheduleCache from, int ranks, long[] runningEndSec, int[] runningGpus) {}

  /**
   * The cache a finished single-tenant pass leaves, or null when it leaves none: no reservation, a
   * pinned one or one for a gang that needs CPU or memory, a job before the last reservation that
   * waits for another reason, capacity that is neither free nor held by a running job (a cordoned
   * node), or no free count (its reservations came from elsewhere). The cache the pass replayed, if
   * any, is updated in place and returned: O(replayed ranks + new entries + reserved entries), with
   * no copy of the entries it did not reach. Ranks from {@code settled} on are not in {@code
   * passReasons} yet: the pass settled them as waiting, none started or reserved.
   */
  static ScheduleCache record(
      ClusterSnapshot snapshot,
      long nowSec,
      int[] order,
      byte[] passReasons,
      int settled,
      List<Reservation> made,
      Ledger ledger,
      AvailabilityProfile profile,
      Replay replay) {
    if (made.isEmpty() || order.length >= 1 << 23) {
      return null;
    }
    ScheduleCache previous = replay == null ? null : replay.from();
    int replayed = replay == null ? 0 : replay.ranks();
    // Keep up to this pass's last reservation; or, when the replay of the previous cache stopped
    // early and nothing started from there on, everything replayed and the previous cache's rest.
    boolean tail = previous != null && replayed < previous.size;
    for (int rank = tail ? replayed : settled; rank < settled; rank++) {
      tail = passReasons[rank] >= 0;
      if (!tail) {
        break;
      }
    }
    FreeCount count = tail ? previous.freeCount : profile.freeCount();
    if (count == null) {
      return null;
    }
    int last = replayed - 1;
    if (!tail) {
      for (int rank = settled - 1; rank >= replayed; rank--) {
        if (passReasons[rank] == RESERVED) {
          last = rank;
          break;
        }
      }
    }
    // The replayed ranks hold their cached reasons or started; the others must be kept kinds.
    int fresh = 0;
    for (int rank = replayed; rank <= last; rank++) {
      byte r = passReasons[rank];
      if (r == RESERVED || r == BEGIN_TIME || r == NEVER_FITS) {
        fresh++;
      } else if (r >= 0) {
        return null;
      }
    }
    Running running = running(snapshot, ledger, replay);
    if (running == null) {
      return null;
    }
    var cache = previous != null ? previous : new ScheduleCache(snapshot.cluster(), fresh);
    cache.nowSec = nowSec;
    cache.running = running;
    cache.freeCount = count;
    int adopted = cache.dropStarted(passReasons, replayed, tail);
    if (!tail
        && !cache.append(
            snapshot.pendingJobs(), order, passReasons, replayed, last, fresh, made, adopted)) {
      return null;
    }
    return cache;
  }

  /**
   * Drops the replayed entries that started, keeping the order of the others, which move up against
   * the first rank not replayed; without {@code tail}, drops the ranks not replayed too. Keeps
   * {@link #byStart} in step. Returns how many replayed entries kept a reservation (the first of
   * this pass's reservations, in order made).
   */
  private int dropStarted(byte[] passReasons, int replayed, boolean tail) {
    int oldHead = head;
    int prefixEnd = oldHead + replayed;
    int[] newPos = new int[replayed];
    int write = prefixEnd;
    int adopted = 0;
    for (int rank = replayed - 1; rank >= 0; rank--) {
      int pos = oldHead + rank;
      if (passReasons[rank] < 0) {
        newPos[rank] = -1;
        continue;
      }
      adopted += reasons[pos] == RESERVED ? 1 : 0;
      newPos[rank] = --write;
      if (write != pos) {
        ids[write] = ids[pos];
        reasons[write] = reasons[pos];
        reservations[write] = reservations[pos];
        startSec[write] = startSec[pos];
      }
    }
    Arrays.fill(reservations, oldHead, write, null);
    head = write;
    size = tail ? size - (write - oldHead) : prefixEnd - write;
    if (!tail) {
      Arrays.fill(reservations, prefixEnd, reservations.length, null);
    }
    int kept = 0;
    for (int i = 0; i < byStartCount; i++) {
      int p = byStart[i];
      if (p < prefixEnd) {
        int q = newPos[p - oldHead];
        if (q >= 0) {
          byStart[kept++] = q;
        }
      } else if (tail) {
        byStart[kept++] = p;
      }
    }
    byStartCount = kept;
    return adopted;
  }

  /**
   * Appends the entries of ranks {@code from} to {@code last} that did not start ({@code fresh} of
   * them), their reservations being {@code made}'s from index {@code m}, and merges their places
   * into {@link #byStart}. False when one of them is not a count.
   */
  private boolean append(
      PendingJobs pending,
      int[] order,
      byte[] passReasons,
      int from,
      int last,
      int fresh,
      List<Reservation> made,
      int m) {
    if (head + size + fresh > ids.length) {
      relocate(Math.max(16, (size + fresh) * 3 / 2));
    }
    int firstNew = head + size;
    int added = 0;
    long[] keys = new long[fresh];
    for (int rank = from; rank <= last; rank++) {
      byte r = passReasons[rank];
      if (r < 0) {
        continue;
      }
      int pos = head + size++;
      ids[pos] = pending.ids()[order[rank]];
      reasons[pos] = r;
      reservations[pos] = null;
      startSec[pos] = 0;
      if (r == RESERVED) {
        Reservation reservation = made.get(m++);
        if (!reservation.countOnly()) {
          return false;
        }
        reservations[pos] = reservation;
        startSec[pos] = reservation.startSec();
        keys[added++] = (startSec[pos] << 23) | (pos - firstNew);
      }
    }
    Arrays.sort(keys, 0, added);
    // Merge: the kept entries are sorted and all placed before the new ones.
    int carried = byStartCount;
    int[] old = Arrays.copyOf(byStart, carried);
    if (byStart.length < carried + added) {
      byStart = new int[Math.max(16, (carried + added) * 3 / 2)];
    }
    int a = 0;
    int b = 0;
    for (int n = 0; n < carried + added; n++) {
      boolean takeOld = b >= added || (a < carried && startSec[old[a]] <= keys[b] >>> 23);
      byStart[n] = takeOld ? old[a++] : firstNew + (int) (keys[b++] & ((1 << 23) - 1));
    }
    byStartCount = carried + added;
    return true;
  }

  /** Moves the entries to the start of new arrays of {@code capacity}. */
  private void relocate(int capacity) {
    ids = Arrays.copyOfRange(ids, head, head + capacity);
    reasons = Arrays.copyOfRange(reasons, head, head + capacity);
    reservations = Arrays.copyOfRange(reservations, head, head + capacity);
    startSec = Arrays.copyOfRange(startSec, head, head + capacity);
    for (int i = 0; i < byStartCount; i++) {
      byStart[i] -= head;
    }
    head = 0;
  }

  /**
   * The running jobs the next pass must find: the snapshot's, then those this pass started; null
   * when some GPU is neither free nor held by one of them.
   */
  private static Running running(ClusterSnapshot snapshot, Ledger ledger, Replay replay) {
    int before = snapshot.runningCount();
    List<RunningJob> started = ledger.started();
    var jobs = new RunningJob[before + started.size()];
    long[] endSec = new long[jobs.length];
    int[] gpus = new int[jobs.length];
    long held = 0;
    boolean known = replay != null && replay.runningEndSec() != null;
    for (int i = 0; i < before; i++) {
      jobs[i] = snapshot.running(i);
      endSec[i] = known ? replay.runningEndSec()[i] : jobs[i].endLimitSec();
      gpus[i] = known ? replay.runningGpus()[i] : jobs[i].job().totalGpus();
      held += gpus[i];
    }
    if (ledger.freeTotal() + held + startedGpus(started) != snapshot.cluster().totalGpus()) {
      return null;
    }
    for (int i = 0; i < started.size(); i++) {
      jobs[before + i] = started.get(i);
      endSec[before + i] = started.get(i).endLimitSec();
      gpus[before + i] = started.get(i).job().totalGpus();
    }
    return new Running(jobs, before, endSec, gpus);
  }

  private static long startedGpus(List<RunningJob> started) {
    long sum = 0;
    for (RunningJob r : started) {
      sum += r.job().totalGpus();
    }
    return sum;
  }

  /**
   * Replays the cached jobs at the front of {@code order} if the conditions of the class note hold:
   * sets their reasons, starts those whose reservation is now, adopts the others' reservations into
   * the ledger and {@code reserved}, and hands the free count to {@code profile}. Stops at the
   * first cached reservation a pass computing everything would not make (it makes none once no
   * later job could use the free GPUs, or once it has {@code maxReservations}): the pass goes on
   * from there. Returns what it did, or null, changing nothing, when the cache does not apply.
   * {@code laterFit} tells whether a later job could start in the free GPUs.
   */
  Replay replay(
      ClusterSnapshot snapshot,
      long now,
      int[] order,
      byte[] passReasons,
      LaterFit laterFit,
      int maxReservations,
      Ledger ledger,
      AvailabilityProfile profile,
      GangPlacer placer,
      List<Decision.Start> starts,
      List<Reservation> reserved) {
    if (snapshot.cluster() != cluster
        || now < nowSec
        || size > order.length
        || !sameWaitingJobs(snapshot.pendingJobs(), order, now)) {
      return null;
    }
    long[] runningEndSec = new long[snapshot.runningCount()];
    int[] runningGpus = new int[snapshot.runningCount()];
    if (!runningAsPredicted(snapshot, now, ledger, runningEndSec, runningGpus)) {
      return null;
    }
    var pending = snapshot.pendingJobs();
    int stop = reservingUpTo(pending, order, laterFit, maxReservations, ledger);
    var adopted = new ArrayList<Reservation>(stop);
    int converted = 0;
    for (int rank = 0; rank < stop; rank++) {
      int pos = head + rank;
      byte reason = reasons[pos];
      if (reason != RESERVED) {
        passReasons[rank] = reason;
        continue;
      }
      if (startSec[pos] > now) {
        adopted.add(reservations[pos]);
        passReasons[rank] = RESERVED;
        continue;
      }
      // Its reservation is now: it starts, on the nodes the pass would choose, holding what the
      // reservation held (so no other reservation's spare GPUs change).
      Job job = pending.jobs()[order[rank]];
      Placement placement = placer.place(job.spec().gang(), -1, ledger.now(0), true, null);
      if (placement == null) {
        throw new IllegalStateException("reserved job " + job.id() + " does not fit at its start");
      }
      starts.add(new Decision.Start(job.id(), ledger.startReserved(job, placement)));
      passReasons[rank] = -1;
      converted++;
    }
    var sorted = new ArrayList<Reservation>(adopted.size());
    for (int k = 0; k < byStartCount; k++) {
      int i = byStart[k];
      if (i < head + stop && startSec[i] > now) {
        sorted.add(reservations[i]);
      }
    }
    ledger.adopt(sorted, adopted);
    reserved.addAll(adopted);
    if (stop == size) {
      profile.carry(freeCount.carryTo(ledger, converted, adopted.size()));
    }
    return new Replay(this, stop, runningEndSec, runningGpus);
  }

  /**
   * Condition 1: the running jobs are those predicted, in start order, and every GPU is free or
   * held by one of them. Fills each one's end and GPUs.
   */
  private boolean runningAsPredicted(
      ClusterSnapshot snapshot, long now, Ledger ledger, long[] endSec, int[] gpus) {
    RunningJob[] expected = running.jobs();
    int j = 0;
    long held = 0;
    for (int i = 0; i < expected.length; i++) {
      if (running.endSec()[i] <= now) {
        continue; // ended at its limit, as predicted
      }
      if (j >= snapshot.runningCount()) {
        return false;
      }
      RunningJob actual = snapshot.running(j);
      boolean same =
          i < running.fromStore()
              ? actual == expected[i]
              : actual.job() == expected[i].job() && actual.startSec() == expected[i].startSec();
      if (!same) {
        return false;
      }
      endSec[j] = running.endSec()[i];
      gpus[j] = running.gpus()[i];
      held += gpus[j];
      j++;
    }
    return j == snapshot.runningCount() && ledger.freeTotal() + held == cluster.totalGpus();
  }

  /**
   * Conditions 2 and 3: the cached jobs come first in {@code order}, each in the same state, and no
   * reservation is in the past.
   */
  private boolean sameWaitingJobs(PendingJobs pending, int[] order, long now) {
    long[] pendingIds = pending.ids();
    long[] eligibleSec = pending.eligibleSec();
    for (int rank = 0; rank < size; rank++) {
      int slot = order[rank];
      if (pendingIds[slot] != ids[head + rank]) {
        return false;
      }
      byte reason = reasons[head + rank];
      boolean held = eligibleSec[slot] > now;
      if (reason == BEGIN_TIME ? !held : held) {
        return false;
      }
      if (reason == RESERVED && startSec[head + rank] < now) {
        return false;
      }
    }
    return true;
  }

  /**
   * The first cached rank whose reservation a pass computing everything would not make: it reserves
   * while it has fewer than {@code maxReservations} and, past the first, while some later job needs
   * no more GPUs than are free. The cache's length when it makes all of them.
   */
  private int reservingUpTo(
      PendingJobs pending, int[] order, LaterFit laterFit, int maxReservations, Ledger ledger) {
    long free = ledger.freeTotal();
    long now = ledger.nowSec();
    int count = 0;
    for (int rank = 0; rank < size; rank++) {
      if (reasons[head + rank] != RESERVED) {
        continue;
      }
      if (startSec[head + rank] == now) {
        free -= pending.gpus()[order[rank]];
        continue;
      }
      if (count >= maxReservations || (count > 0 && !laterFit.anyFits(rank + 1, free))) {
        return rank;
      }
      count++;
    }
    return size;
  }
}

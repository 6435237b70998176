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
 * <p>Cost of a replay: O(running jobs + replayed jobs), most of it array reads; the running jobs
 * that were running before are recognised by identity (the store keeps one object per run). Not
 * thread-safe, like the pass that holds it.
 */
final class ScheduleCache {
  private static final byte RESERVED = (byte) Reason.RESERVED.ordinal();
  private static final byte BEGIN_TIME = (byte) Reason.BEGIN_TIME.ordinal();
  private static final byte NEVER_FITS = (byte) Reason.NEVER_FITS.ordinal();

  private final Cluster cluster;
  private final long nowSec;
  private final Running running;
  // The waiting jobs up to the last reservation that did not start, in order, with their reasons
  // and, for RESERVED, their reservations, starts and GPUs.
  private final long[] ids;
  private final byte[] reasons;
  private final Reservation[] reservations;
  private final long[] startSec;
  // The reserved entries by (start, rank): the ledger's order.
  private final int[] byStart;
  private final FreeCount freeCount;

  /**
   * The running jobs a later pass must find: {@code jobs[i]} for {@code i < fromStore} are the
   * store's own objects (compared by identity), the others were started by the recording pass
   * (compared by job and start). Each with its time limit's end and its GPUs.
   */
  private record Running(RunningJob[] jobs, int fromStore, long[] endSec, int[] gpus) {}

  private ScheduleCache(
      Cluster cluster,
      long nowSec,
      Running running,
      long[] ids,
      byte[] reasons,
      Reservation[] reservations,
      long[] startSec,
      int[] byStart,
      FreeCount freeCount) {
    this.cluster = cluster;
    this.nowSec = nowSec;
    this.running = running;
    this.ids = ids;
    this.reasons = reasons;
    this.reservations = reservations;
    this.startSec = startSec;
    this.byStart = byStart;
    this.freeCount = freeCount;
  }

  /** What {@link #replay} found, for {@link #record}: how far it went, and the running jobs. */
  record Replay(ScheduleCache from, int ranks, long[] runningEndSec, int[] runningGpus) {}

  /**
   * The cache a finished single-tenant pass leaves, or null when it leaves none: no reservation, a
   * pinned one or one for a gang that needs CPU or memory, a job before the last reservation that
   * waits for another reason, capacity that is neither free nor held by a running job (a cordoned
   * node), or no free count (its reservations came from elsewhere).
   */
  static ScheduleCache record(
      ClusterSnapshot snapshot,
      long nowSec,
      int[] order,
      byte[] passReasons,
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
    boolean tail = previous != null && replayed < previous.ids.length;
    for (int rank = tail ? replayed : order.length; rank < order.length; rank++) {
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
      for (int rank = order.length - 1; rank >= replayed; rank--) {
        if (passReasons[rank] == RESERVED) {
          last = rank;
          break;
        }
      }
    }
    int kept = tail ? previous.ids.length - replayed : 0;
    for (int rank = 0; rank <= last; rank++) {
      byte r = passReasons[rank];
      if (r == RESERVED || r == BEGIN_TIME || r == NEVER_FITS) {
        kept++;
      } else if (r >= 0) {
        return null;
      }
    }
    var pending = snapshot.pendingJobs();
    long[] ids = new long[kept];
    byte[] reasons = new byte[kept];
    var reservations = new Reservation[kept];
    long[] startSec = new long[kept];
    // Where each replayed entry of the previous cache went (-1: it started).
    int[] moved = previous == null ? null : new int[previous.ids.length];
    int k = 0;
    int m = 0;
    for (int rank = 0; rank <= last; rank++) {
      byte r = passReasons[rank];
      if (rank < replayed) {
        // Replayed from the previous cache: same job, reason and reservation (checked then).
        moved[rank] = r < 0 ? -1 : k;
        if (r < 0) {
          continue;
        }
        ids[k] = previous.ids[rank];
        reasons[k] = r;
        reservations[k] = previous.reservations[rank];
        startSec[k] = previous.startSec[rank];
        m += r == RESERVED ? 1 : 0;
        k++;
        continue;
      }
      if (r < 0) {
        continue;
      }
      ids[k] = pending.ids()[order[rank]];
      reasons[k] = r;
      if (r == RESERVED) {
        Reservation reservation = made.get(m++);
        if (!reservation.countOnly()) {
          return null;
        }
        reservations[k] = reservation;
        startSec[k] = reservation.startSec();
      }
      k++;
    }
    int fresh = k;
    if (tail) {
      int rest = previous.ids.length - replayed;
      System.arraycopy(previous.ids, replayed, ids, k, rest);
      System.arraycopy(previous.reasons, replayed, reasons, k, rest);
      System.arraycopy(previous.reservations, replayed, reservations, k, rest);
      System.arraycopy(previous.startSec, replayed, startSec, k, rest);
      for (int i = 0; i < rest; i++) {
        moved[replayed + i] = k + i;
      }
    }
    Running running = running(snapshot, ledger, replay);
    if (running == null) {
      return null;
    }
    return new ScheduleCache(
        snapshot.cluster(),
        nowSec,
        running,
        ids,
        reasons,
        reservations,
        startSec,
        byStart(previous, moved, reservations, startSec, tail ? kept : fresh),
        count);
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
   * Indexes of the reserved entries by (start, index): the order of the ledger's reservations. The
   * previous cache's entries that remain keep their relative order ({@code moved} gives their new
   * indexes); the entries from {@code firstNew} up to {@code end} that did not come from it are
   * sorted and merged in. O(entries + new log new).
   */
  private static int[] byStart(
      ScheduleCache previous, int[] moved, Reservation[] reservations, long[] startSec, int end) {
    int carried = 0;
    int[] old = new int[0];
    if (previous != null) {
      old = new int[previous.byStart.length];
      for (int i : previous.byStart) {
        if (i < moved.length && moved[i] >= 0 && reservations[moved[i]] != null) {
          old[carried++] = moved[i];
        }
      }
    }
    boolean[] isOld = new boolean[end];
    for (int i = 0; i < carried; i++) {
      isOld[old[i]] = true;
    }
    int added = 0;
    long[] keys = new long[end];
    for (int i = 0; i < end; i++) {
      if (reservations[i] != null && !isOld[i]) {
        keys[added++] = (startSec[i] << 23) | i;
      }
    }
    Arrays.sort(keys, 0, added);
    int[] order = new int[carried + added];
    int a = 0;
    int b = 0;
    for (int n = 0; n < order.length; n++) {
      boolean takeOld;
      if (a >= carried) {
        takeOld = false;
      } else if (b >= added) {
        takeOld = true;
      } else {
        long oldKey = (startSec[old[a]] << 23) | old[a];
        takeOld = oldKey <= keys[b];
      }
      order[n] = takeOld ? old[a++] : (int) (keys[b++] & ((1 << 23) - 1));
    }
    return order;
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
        || ids.length > order.length
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
    var adopted = new ArrayList<Reservation>();
    int converted = 0;
    for (int rank = 0; rank < stop; rank++) {
      byte reason = reasons[rank];
      if (reason != RESERVED) {
        passReasons[rank] = reason;
        continue;
      }
      if (startSec[rank] > now) {
        adopted.add(reservations[rank]);
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
    for (int i : byStart) {
      if (i < stop && startSec[i] > now) {
        sorted.add(reservations[i]);
      }
    }
    ledger.adopt(sorted, adopted);
    reserved.addAll(adopted);
    if (stop == ids.length) {
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
    for (int rank = 0; rank < ids.length; rank++) {
      int slot = order[rank];
      if (pendingIds[slot] != ids[rank]) {
        return false;
      }
      byte reason = reasons[rank];
      boolean held = eligibleSec[slot] > now;
      if (reason == BEGIN_TIME ? !held : held) {
        return false;
      }
      if (reason == RESERVED && startSec[rank] < now) {
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
    for (int rank = 0; rank < ids.length; rank++) {
      if (reasons[rank] != RESERVED) {
        continue;
      }
      if (startSec[rank] == now) {
        free -= pending.gpus()[order[rank]];
        continue;
      }
      if (count >= maxReservations || (count > 0 && !laterFit.anyFits(rank + 1, free))) {
        return rank;
      }
      count++;
    }
    return ids.length;
  }
}

package io.kairos.core.state;

import java.util.HashMap;

/**
 * How much of their time limits users' jobs really run: per user, the share of its limit that each
 * of the user's last two finished jobs ran (Tsafrir, Etsion and Feitelson's "last two jobs of the
 * same user" predictor, taken as a share of the limit so that it scales to the next job's limit).
 * Read by {@link ClusterSnapshot#expectedRunSec}: the start forecast assumes that a job runs its
 * limit times its user's recent share, not its whole limit.
 *
 * <p>Entries are created on first sight of a user (a submission or a finish) and never removed: one
 * small object per user who ever submitted. Single writer, like the store.
 */
final class RunHistory {
  /** One user's last two shares, in thousandths of the limit; -1 while unknown. */
  static final class Entry {
    private int lastMilli = -1;
    private int previousMilli = -1;

    /** The mean of the known shares, in thousandths (1 to 1000); -1 when none is known. */
    int shareMilli() {
      if (lastMilli < 0) {
        return -1;
      }
      return previousMilli < 0 ? lastMilli : (lastMilli + previousMilli) / 2;
    }

    void finished(long runSec, long limitSec) {
      previousMilli = lastMilli;
      long share = limitSec <= 0 ? 1000 : Math.max(1, runSec) * 1000 / limitSec;
      lastMilli = (int) Math.max(1, Math.min(1000, share));
    }
  }

  private final HashMap<String, Entry> byUser = new HashMap<>();

  /** The user's entry, created on first sight. */
  Entry of(String user) {
    return byUser.computeIfAbsent(user, _ -> new Entry());
  }

  /** The user's recent share in thousandths, or -1 when none is known; creates no entry. */
  int shareMilli(String user) {
    Entry e = byUser.get(user);
    return e == null ? -1 : e.shareMilli();
  }

  /** A copy to carry into a store that is rebuilt from records (the controller's). */
  RunHistory copy() {
    var out = new RunHistory();
    byUser.forEach(
        (user, e) -> {
          var c = out.of(user);
          c.lastMilli = e.lastMilli;
          c.previousMilli = e.previousMilli;
        });
    return out;
  }
}

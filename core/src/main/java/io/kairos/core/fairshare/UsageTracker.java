package io.kairos.core.fairshare;

import io.kairos.core.Checks;
import java.util.Arrays;
import java.util.Objects;

/**
 * Decayed usage per account and resource, and the cluster's decayed capacity to measure it against.
 * Mutable, single-threaded; {@link #copy()} gives an independent what-if copy.
 *
 * <h2>Decay</h2>
 *
 * Usage decays exponentially with a half-life (default 7 days, as Slurm's {@code
 * PriorityDecayHalfLife}): {@link #decayTo(long)} multiplies every value by {@code 2^(-dt /
 * halfLife)} exactly, so usage halves after one half-life and is a quarter after two (bit for bit:
 * those factors are powers of two). The result depends only on the sequence of calls: decaying to
 * t1 then t2 may differ from decaying straight to t2 in the last bit, so drivers replay the same
 * sequence.
 *
 * <h2>Charging</h2>
 *
 * {@link #charge(String, Resources, long, long)} adds what {@code resources} held from {@code
 * fromSec} to {@code toSec} used, decayed to the tracker's current time {@link #nowSec()}: the
 * exact integral {@code rate * integral(from..to) 2^(-(now - t) / halfLife) dt}. Charging is
 * therefore additive over time (charging [a, b] then [b, c] equals charging [a, c] up to rounding),
 * and charging then decaying equals decaying then charging, up to rounding. The amount is added to
 * the account and to every ancestor, so an account's usage is its own plus its subtree's.
 *
 * <h2>Dominant share (DRF), capacity-weighted</h2>
 *
 * An account's share of one resource is its decayed usage over the cluster's decayed capacity of
 * that resource: the capacity integrated with the same decay since {@code startSec}. Its dominant
 * share is the largest of these over the resources with capacity (Ghodsi et al.'s Dominant Resource
 * Fairness, applied to usage over time). An account that kept half the GPUs busy since the start
 * has a GPU share of 0.5, whatever the others did.
 *
 * <p>Why capacity and not total usage: dividing by the total usage of all accounts makes a lightly
 * used resource look dominant (one job that touched the only memory anyone used would have a memory
 * share of 1), and makes every share relative to whoever else happened to run: on a nearly idle
 * cluster the one account that ran anything would have share 1 and the lowest factor, and an
 * account's share would fall whenever another account ran. Against capacity, an account's shares
 * depend on its own usage only. On a full cluster the two agree (the usage of all accounts is the
 * capacity); on an idle cluster every share is small, which is the truth: no one is crowding anyone
 * out. Both are monotone in the account's own usage. Shares can exceed 1 only if the caller charges
 * more than the capacity it declared.
 */
public final class UsageTracker {
  /** Slurm's default {@code PriorityDecayHalfLife}: 7 days. */
  public static final long DEFAULT_HALF_LIFE_SEC = 7L * 24 * 3600;

  private static final double LN2 = StrictMath.log(2.0);
  private static final int R = Resource.COUNT;

  private final AccountTree tree;
  private final long halfLifeSec;
  private final long startSec;
  private final double[] capacity;
  private final double[] decayedCapacity;

  /** Decayed usage, indexed {@code accountId * R + resource.ordinal()}. */
  private final double[] usage;

  private long nowSec;

  /**
   * A tracker with no usage at {@code startSec}.
   *
   * @param capacity the cluster's capacity; a resource with capacity 0 is tracked but never
   *     dominant
   * @param halfLifeSec &gt; 0
   */
  public UsageTracker(AccountTree tree, Resources capacity, long halfLifeSec, long startSec) {
    this.tree = Objects.requireNonNull(tree, "tree");
    Objects.requireNonNull(capacity, "capacity");
    this.halfLifeSec = Checks.positive(halfLifeSec, "halfLifeSec");
    this.startSec = startSec;
    this.nowSec = startSec;
    this.capacity = new double[R];
    for (Resource r : Resource.ALL) {
      this.capacity[r.ordinal()] = capacity.amount(r);
    }
    this.decayedCapacity = new double[R];
    this.usage = new double[tree.size() * R];
  }

  /** With the default half-life of 7 days. */
  public UsageTracker(AccountTree tree, Resources capacity, long startSec) {
    this(tree, capacity, DEFAULT_HALF_LIFE_SEC, startSec);
  }

  private UsageTracker(UsageTracker other) {
    this.tree = other.tree;
    this.halfLifeSec = other.halfLifeSec;
    this.startSec = other.startSec;
    this.nowSec = other.nowSec;
    this.capacity = other.capacity.clone();
    this.decayedCapacity = other.decayedCapacity.clone();
    this.usage = other.usage.clone();
  }

  /** An independent copy: charging or decaying one leaves the other as it was. */
  public UsageTracker copy() {
    return new UsageTracker(this);
  }

  public AccountTree tree() {
    return tree;
  }

  public long halfLifeSec() {
    return halfLifeSec;
  }

  /** When capacity starts to accrue; no charge may begin earlier. */
  public long startSec() {
    return startSec;
  }

  /** The time all values are decayed to. */
  public long nowSec() {
    return nowSec;
  }

  /**
   * Decays all usage and the decayed capacity to {@code toSec}. A call with the current time
   * changes nothing.
   *
   * @throws IllegalArgumentException if {@code toSec} is before {@link #nowSec()}
   */
  public void decayTo(long toSec) {
    if (toSec < nowSec) {
      throw new IllegalArgumentException(
          "decayTo(" + toSec + ") is before the tracker's time " + nowSec + ": time only moves on");
    }
    if (toSec == nowSec) {
      return;
    }
    double dt = (double) (toSec - nowSec);
    double keep = StrictMath.pow(2.0, -dt / halfLifeSec);
    // Capacity held over (now, to], decayed to `to`: c * tau * (1 - 2^(-dt/h)), tau = h / ln 2.
    double accrued = meanLifeFraction(dt);
    for (int r = 0; r < R; r++) {
      decayedCapacity[r] = decayedCapacity[r] * keep + capacity[r] * accrued;
    }
    for (int i = 0; i < usage.length; i++) {
      usage[i] *= keep;
    }
    nowSec = toSec;
  }

  /**
   * {@code integral(0..dt) 2^(-t / h) dt = (h / ln 2) * (1 - 2^(-dt / h))}, through {@code expm1}
   * so that short intervals keep their precision (about {@code dt} when {@code dt << h}).
   */
  private double meanLifeFraction(double dt) {
    return -StrictMath.expm1(-dt * LN2 / halfLifeSec) * (halfLifeSec / LN2);
  }

  /**
   * Charges what {@code held} used from {@code fromSec} to {@code toSec}, decayed to {@link
   * #nowSec()}, to the account and every ancestor.
   *
   * @throws IllegalArgumentException unless {@code startSec <= fromSec <= toSec <= nowSec()}, or if
   *     the account is unknown
   */
  public void charge(String account, Resources held, long fromSec, long toSec) {
    charge(tree.id(account), held, fromSec, toSec);
  }

  /** {@link #charge(String, Resources, long, long)} by account id. */
  public void charge(int accountId, Resources held, long fromSec, long toSec) {
    Objects.requireNonNull(held, "held");
    Checks.argument(
        startSec <= fromSec && fromSec <= toSec && toSec <= nowSec,
        () ->
            "charge for "
                + tree.name(accountId)
                + " over ["
                + fromSec
                + ", "
                + toSec
                + "] must lie within [start "
                + startSec
                + ", now "
                + nowSec
                + "]: decayTo(toSec) first");
    if (fromSec == toSec) {
      return;
    }
    // integral(from..to) 2^(-(now - t)/h) dt = 2^(-(now - to)/h) * integral(0..to-from) 2^(-t/h)
    double weight =
        StrictMath.pow(2.0, -(double) (nowSec - toSec) / halfLifeSec)
            * meanLifeFraction((double) (toSec - fromSec));
    for (int r = 0; r < R; r++) {
      long amount = held.amount(Resource.ALL[r]);
      if (amount == 0) {
        continue;
      }
      double add = amount * weight;
      for (int id = accountId; id != AccountTree.NO_PARENT; id = tree.parent(id)) {
        usage[id * R + r] += add;
      }
    }
  }

  /** Decayed usage of an account (its subtree included), in resource-seconds. */
  public double usage(int accountId, Resource resource) {
    return usage[accountId * R + resource.ordinal()];
  }

  /** {@link #usage(int, Resource)} by name. */
  public double usage(String account, Resource resource) {
    return usage(tree.id(account), resource);
  }

  /** Decayed usage summed over the top-level accounts: everything charged. */
  public double totalUsage(Resource resource) {
    double sum = 0;
    for (int id : tree.topLevelView()) {
      sum += usage[id * R + resource.ordinal()];
    }
    return sum;
  }

  /** The cluster's capacity integrated since the start with the same decay, in resource-seconds. */
  public double decayedCapacity(Resource resource) {
    return decayedCapacity[resource.ordinal()];
  }

  /** Decayed usage over decayed capacity; 0 for a resource without capacity or before any time. */
  public double share(int accountId, Resource resource) {
    double cap = decayedCapacity[resource.ordinal()];
    return cap > 0 ? usage[accountId * R + resource.ordinal()] / cap : 0.0;
  }

  /** The largest {@link #share(int, Resource)} over the resources: the DRF dominant share. */
  public double dominantShare(int accountId) {
    double max = 0;
    for (Resource r : Resource.ALL) {
      max = Math.max(max, share(accountId, r));
    }
    return max;
  }

  /** {@link #dominantShare(int)} by name. */
  public double dominantShare(String account) {
    return dominantShare(tree.id(account));
  }

  /**
   * The resource of the dominant share; the first in {@link Resource} order on a tie, {@link
   * Resource#GPU} when the account has used nothing.
   */
  public Resource dominantResource(int accountId) {
    Resource best = Resource.GPU;
    double max = -1;
    for (Resource r : Resource.ALL) {
      double s = share(accountId, r);
      if (s > max) {
        max = s;
        best = r;
      }
    }
    return best;
  }

  @Override
  public String toString() {
    return "UsageTracker[now="
        + nowSec
        + ", halfLife="
        + halfLifeSec
        + "s, decayedCapacity="
        + Arrays.toString(decayedCapacity)
        + "]";
  }
}

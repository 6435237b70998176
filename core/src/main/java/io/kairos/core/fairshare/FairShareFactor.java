package io.kairos.core.fairshare;

import java.util.Arrays;
import java.util.Comparator;
import java.util.Objects;
import java.util.function.Function;

/**
 * Each account's fair-share factor in (0, 1] at one instant, computed from an {@link AccountTree}
 * and a {@link UsageTracker}: 1 for an account that is owed the most, smaller the more it has used
 * against its shares. Immutable; build one per pass (it is {@code O(accounts)} for classic, {@code
 * O(accounts log siblings)} for Fair Tree).
 *
 * <p>Usage here is always the account's DRF dominant share ({@link
 * UsageTracker#dominantShare(int)}): decayed usage of its most used resource over that resource's
 * decayed capacity.
 *
 * <h2>Classic (Slurm's {@code NO_FAIR_TREE})</h2>
 *
 * {@code F = 2^(-UE / S)} with {@code S} the normalized shares and {@code UE} the effective usage:
 * a top-level account's own usage {@code U}; below, {@code UE = U * (1 - s) + UE(parent) * s} with
 * {@code s} the account's shares over its siblings' (Slurm's {@code UE = U + (UE(parent) - U) * s},
 * written so that every term grows with {@code U}). An account that used nothing under a parent
 * that used nothing has factor 1; one that used exactly its share has 1/2. When {@code UE / S} is
 * so large that {@code 2^(-UE/S)} underflows, the factor is {@link Double#MIN_VALUE} and {@link
 * #compare} still orders by {@code UE / S}.
 *
 * <h2>Fair Tree (Slurm's default)</h2>
 *
 * Siblings are ordered by level fair share {@code LFS = S_local / U_local}, highest first, where
 * {@code S_local} is the account's shares over its siblings' and {@code U_local} its usage over the
 * siblings' total usage ({@code +Infinity} with no usage). The tree is walked depth-first in that
 * order, and the leaves are ranked in the order they are met: with {@code n} leaves, the first gets
 * {@code n/n = 1}, the next {@code (n-1)/n}, the last {@code 1/n}. So if account A comes before its
 * sibling B, every leaf under A outranks every leaf under B, however deep. Within a sibling group,
 * accounts with equal LFS keep name order; adjacent leaves with equal LFS share the better rank
 * (two idle users are equal). Unlike Slurm, tied non-leaf accounts are not merged; they are visited
 * in name order. A non-leaf account's factor is its best leaf's (the first met in its subtree), for
 * jobs charged to it directly.
 *
 * <p>Within a sibling group the order is by {@code U / shares} ascending (the common factors of LFS
 * cancel), computed once per account so the comparison is a total order, and monotone: more usage
 * by an account never moves it ahead.
 */
public final class FairShareFactor {
  /** How the factor is computed. */
  public enum Algorithm {
    CLASSIC,
    FAIR_TREE
  }

  private final AccountTree tree;
  private final Algorithm algorithm;
  private final double[] factor;

  /** Smaller sorts first; ties broken by name in {@link #compare}. */
  private final double[] sortKey;

  private final double[] effectiveUsage;
  private final double[] levelFairShare;

  private FairShareFactor(AccountTree tree, Algorithm algorithm) {
    this.tree = tree;
    this.algorithm = algorithm;
    int n = tree.size();
    this.factor = new double[n];
    this.sortKey = new double[n];
    this.effectiveUsage = new double[n];
    this.levelFairShare = new double[n];
  }

  /** Factors by {@code algorithm} from the tracker's current usage. */
  public static FairShareFactor of(Algorithm algorithm, UsageTracker usage) {
    return switch (algorithm) {
      case CLASSIC -> classic(usage);
      case FAIR_TREE -> fairTree(usage);
    };
  }

  /** Slurm's classic factor {@code 2^(-UE/S)}. */
  public static FairShareFactor classic(UsageTracker usage) {
    AccountTree tree = usage.tree();
    var f = new FairShareFactor(tree, Algorithm.CLASSIC);
    // Ids are in pre-order: a parent's effective usage is known before its children's.
    for (int id = 0; id < tree.size(); id++) {
      double own = usage.dominantShare(id);
      int parent = tree.parent(id);
      double s = tree.localShares(id);
      double ue =
          parent == AccountTree.NO_PARENT ? own : own * (1.0 - s) + f.effectiveUsage[parent] * s;
      double ratio = ue / tree.normalizedShares(id);
      f.effectiveUsage[id] = ue;
      f.sortKey[id] = ratio;
      f.factor[id] = Math.max(StrictMath.pow(2.0, -ratio), Double.MIN_VALUE);
    }
    f.fillLevelFairShare(usage);
    return f;
  }

  /** Slurm's Fair Tree: rank-based factors from a depth-first walk in level-fair-share order. */
  public static FairShareFactor fairTree(UsageTracker usage) {
    AccountTree tree = usage.tree();
    var f = new FairShareFactor(tree, Algorithm.FAIR_TREE);
    int n = tree.size();
    double[] dominant = new double[n];
    int leaves = 0;
    for (int id = 0; id < n; id++) {
      dominant[id] = usage.dominantShare(id);
      f.effectiveUsage[id] = dominant[id];
      if (tree.isLeaf(id)) {
        leaves++;
      }
    }
    var walk = new Walk(tree, dominant, f, leaves);
    walk.visit(tree.topLevelView());
    f.fillLevelFairShare(usage);
    return f;
  }

  /** The depth-first ranking walk of Fair Tree. */
  private static final class Walk {
    private final AccountTree tree;
    private final double[] dominant;
    private final FairShareFactor f;
    private final int leaves;

    /** Leaf ids in the order the walk meets them. */
    private final int[] leafAt;

    private int position;

    Walk(AccountTree tree, double[] dominant, FairShareFactor f, int leaves) {
      this.tree = tree;
      this.dominant = dominant;
      this.f = f;
      this.leaves = leaves;
      this.leafAt = new int[leaves];
    }

    void visit(int[] siblings) {
      int[] sorted = sortByUsagePerShare(siblings);
      int tieRank = -1;
      int previousLeaf = -1;
      for (int id : sorted) {
        if (tree.isLeaf(id)) {
          boolean tied = previousLeaf >= 0 && usagePerShare(previousLeaf, id) == 0;
          int rank = tied ? tieRank : position;
          tieRank = rank;
          previousLeaf = id;
          f.sortKey[id] = rank;
          f.factor[id] = (double) (leaves - rank) / leaves;
          leafAt[position++] = id;
        } else {
          previousLeaf = -1;
          int first = position;
          visit(tree.childrenView(id));
          // A non-leaf account has leaves below it; the first one met has the best rank.
          int firstLeaf = leafAt[first];
          f.sortKey[id] = f.sortKey[firstLeaf];
          f.factor[id] = f.factor[firstLeaf];
        }
      }
    }

    /** Compares {@code U / shares}: one rounded quotient per account, so a total order. */
    private int usagePerShare(int a, int b) {
      return Double.compare(dominant[a] / tree.shares(a), dominant[b] / tree.shares(b));
    }

    /** Stable (TimSort), so accounts with equal usage per share keep name (id) order. */
    private int[] sortByUsagePerShare(int[] siblings) {
      Integer[] boxed = new Integer[siblings.length];
      for (int i = 0; i < siblings.length; i++) {
        boxed[i] = siblings[i];
      }
      Arrays.sort(boxed, this::usagePerShare);
      int[] sorted = new int[boxed.length];
      for (int i = 0; i < boxed.length; i++) {
        sorted[i] = boxed[i];
      }
      return sorted;
    }
  }

  private void fillLevelFairShare(UsageTracker usage) {
    fillLevelFairShare(tree.topLevelView(), usage);
    for (int id = 0; id < tree.size(); id++) {
      fillLevelFairShare(tree.childrenView(id), usage);
    }
  }

  private void fillLevelFairShare(int[] siblings, UsageTracker usage) {
    double total = 0;
    for (int id : siblings) {
      total += usage.dominantShare(id);
    }
    for (int id : siblings) {
      double own = usage.dominantShare(id);
      levelFairShare[id] =
          own == 0 ? Double.POSITIVE_INFINITY : tree.localShares(id) / (own / total);
    }
  }

  public Algorithm algorithm() {
    return algorithm;
  }

  public AccountTree tree() {
    return tree;
  }

  /** The factor, in (0, 1]. */
  public double factor(int accountId) {
    return factor[accountId];
  }

  /** {@link #factor(int)} by name. */
  public double factor(String account) {
    return factor[tree.id(account)];
  }

  /**
   * Classic: the effective usage {@code UE}. Fair Tree: the dominant share, which is what the walk
   * compares.
   */
  public double effectiveUsage(int accountId) {
    return effectiveUsage[accountId];
  }

  /**
   * {@code S_local / U_local} among the account's siblings ({@code sshare}'s "Level FS"), {@code
   * +Infinity} with no usage. Informational for classic; the sort key of Fair Tree.
   */
  public double levelFairShare(int accountId) {
    return levelFairShare[accountId];
  }

  /**
   * The key {@link #compare} orders accounts by, lower first, before the name: accounts with equal
   * keys are equally served. For the pass, which ranks accounts once and jobs by rank.
   */
  public double orderKey(int accountId) {
    return sortKey[accountId];
  }

  /**
   * Orders accounts for the pass: higher factor first (for classic, lower {@code UE/S} first, which
   * is the same order and stays strict where the factor underflows), then account name. Negative
   * when {@code a} goes first.
   *
   * @throws IllegalArgumentException for an unknown account
   */
  public int compare(String a, String b) {
    int ia = tree.id(a);
    int ib = tree.id(b);
    int c = Double.compare(sortKey[ia], sortKey[ib]);
    return c != 0 ? c : a.compareTo(b);
  }

  /** {@link #compare} as a comparator over account names; consistent with equals on names. */
  public Comparator<String> accountOrder() {
    return this::compare;
  }

  /** Orders any items by their account with {@link #compare}; the caller adds its own tie-break. */
  public <T> Comparator<T> byAccount(Function<T, String> account) {
    Objects.requireNonNull(account, "account");
    return (x, y) -> compare(account.apply(x), account.apply(y));
  }
}

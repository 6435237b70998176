package io.kairos.core.fairshare;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The account hierarchy (organisation &gt; team &gt; user, or any depth) with each account's
 * shares. Immutable.
 *
 * <p>The root is implicit: top-level accounts name {@link #ROOT} as their parent, and "root" cannot
 * be an account. Accounts get dense ids {@code 0..size()-1} in pre-order, children in name order,
 * so the ids do not depend on the order of the input list, a parent's id is smaller than its
 * children's, and the subtree of account {@code id} is exactly the ids {@code id .. id +
 * subtreeSize(id) - 1}. {@link UsageTracker} and {@link FairShareFactor} index their arrays by
 * these ids.
 *
 * <p>Normalized shares (Slurm's classic definition): an account's shares divided by the sum of its
 * siblings' shares (itself included), times its parent's normalized share; top-level accounts
 * divide by the sum over all top-level accounts. The top level's normalized shares sum to 1, and
 * any account's children's sum to the account's own.
 */
public final class AccountTree {
  /** The implicit parent of top-level accounts. */
  public static final String ROOT = "root";

  /** No parent: the value of {@link #parent(int)} for a top-level account. */
  public static final int NO_PARENT = -1;

  /**
   * One account as configured.
   *
   * @param name unique, not blank, not {@link #ROOT}
   * @param parent another account's name, or {@link #ROOT}
   * @param shares its weight among its siblings, &gt; 0
   */
  public record Account(String name, String parent, long shares) {
    public Account {
      Objects.requireNonNull(name, "account.name");
      Objects.requireNonNull(parent, "account.parent");
    }
  }

  private final String[] names;
  private final int[] parents;
  private final long[] shares;
  private final int[] depths;
  private final int[] subtreeSizes;
  private final int[][] children;
  private final int[] topLevel;
  private final double[] normalizedShares;
  private final double[] localShares;
  private final TreeMap<String, Integer> ids;

  private AccountTree(List<Account> sorted, TreeMap<String, List<String>> childrenByParent) {
    int n = sorted.size();
    names = new String[n];
    parents = new int[n];
    shares = new long[n];
    depths = new int[n];
    subtreeSizes = new int[n];
    children = new int[n][];
    normalizedShares = new double[n];
    localShares = new double[n];
    ids = new TreeMap<>();
    var byName = new TreeMap<String, Account>();
    for (Account a : sorted) {
      byName.put(a.name(), a);
    }
    // Iterative pre-order, children in name order: push in reverse so the first pops first.
    var stack = new ArrayList<String>();
    List<String> roots = childrenByParent.getOrDefault(ROOT, List.of());
    for (int i = roots.size() - 1; i >= 0; i--) {
      stack.add(roots.get(i));
    }
    int next = 0;
    while (!stack.isEmpty()) {
      String name = stack.removeLast();
      Account a = byName.get(name);
      int id = next++;
      names[id] = name;
      shares[id] = a.shares();
      ids.put(name, id);
      parents[id] = a.parent().equals(ROOT) ? NO_PARENT : ids.get(a.parent());
      depths[id] = parents[id] == NO_PARENT ? 0 : depths[parents[id]] + 1;
      List<String> kids = childrenByParent.getOrDefault(name, List.of());
      for (int i = kids.size() - 1; i >= 0; i--) {
        stack.add(kids.get(i));
      }
    }
    for (int id = n - 1; id >= 0; id--) {
      subtreeSizes[id] += 1;
      if (parents[id] != NO_PARENT) {
        subtreeSizes[parents[id]] += subtreeSizes[id];
      }
    }
    topLevel = idsOf(roots);
    for (int id = 0; id < n; id++) {
      children[id] = idsOf(childrenByParent.getOrDefault(names[id], List.of()));
    }
    computeNormalizedShares(topLevel, 1.0);
    for (int id = 0; id < n; id++) {
      computeNormalizedShares(children[id], normalizedShares[id]);
    }
  }

  /**
   * Builds and validates the tree.
   *
   * @throws IllegalArgumentException on a blank, reserved or duplicate name, non-positive shares,
   *     an unknown parent or a cycle; the message names the account and the fix
   */
  public static AccountTree of(List<Account> accounts) {
    Objects.requireNonNull(accounts, "accounts");
    var byName = new TreeMap<String, Account>();
    for (Account a : accounts) {
      Objects.requireNonNull(a, "account");
      if (a.name().isBlank()) {
        throw new IllegalArgumentException(
            "account with parent '" + a.parent() + "' has a blank name: give it a name");
      }
      if (a.name().equals(ROOT)) {
        throw new IllegalArgumentException(
            "account 'root' is reserved for the implicit root: rename it, and give top-level"
                + " accounts the parent 'root'");
      }
      if (a.shares() <= 0) {
        throw new IllegalArgumentException(
            "account '"
                + a.name()
                + "' has shares "
                + a.shares()
                + ": shares must be > 0 (give it at least 1)");
      }
      if (byName.putIfAbsent(a.name(), a) != null) {
        throw new IllegalArgumentException(
            "account '" + a.name() + "' is defined twice: keep one definition");
      }
    }
    var childrenByParent = new TreeMap<String, List<String>>();
    for (Account a : byName.values()) {
      if (a.parent().equals(a.name())) {
        throw new IllegalArgumentException(
            "account '" + a.name() + "' is its own parent: give it another parent or 'root'");
      }
      if (!a.parent().equals(ROOT) && !byName.containsKey(a.parent())) {
        throw new IllegalArgumentException(
            "account '"
                + a.name()
                + "' has unknown parent '"
                + a.parent()
                + "': define '"
                + a.parent()
                + "' or use 'root' for a top-level account");
      }
      childrenByParent.computeIfAbsent(a.parent(), _ -> new ArrayList<>()).add(a.name());
    }
    // Every account must reach the root by its parents; the first that does not is on a cycle
    // or hangs under one.
    for (Account a : byName.values()) {
      String at = a.name();
      for (int steps = 0; !at.equals(ROOT); steps++) {
        if (steps > byName.size()) {
          throw new IllegalArgumentException(
              "account '"
                  + a.name()
                  + "' is on or under a parent cycle ("
                  + cycleFrom(at, byName)
                  + "): make one account of the cycle a child of 'root' or of another account");
        }
        at = byName.get(at).parent();
      }
    }
    return new AccountTree(List.copyOf(byName.values()), childrenByParent);
  }

  /** The cycle through {@code onCycle}, starting at its smallest name so the message is stable. */
  private static String cycleFrom(String onCycle, TreeMap<String, Account> byName) {
    String first = onCycle;
    for (String at = byName.get(onCycle).parent();
        !at.equals(onCycle);
        at = byName.get(at).parent()) {
      if (at.compareTo(first) < 0) {
        first = at;
      }
    }
    var path = new ArrayList<String>();
    String at = first;
    do {
      path.add(at);
      at = byName.get(at).parent();
    } while (!at.equals(first));
    path.add(first);
    return String.join(" -> ", path);
  }

  private int[] idsOf(List<String> accountNames) {
    int[] result = new int[accountNames.size()];
    for (int i = 0; i < result.length; i++) {
      result[i] = ids.get(accountNames.get(i));
    }
    return result;
  }

  private void computeNormalizedShares(int[] siblings, double parentShare) {
    long sum = 0;
    for (int id : siblings) {
      sum = Math.addExact(sum, shares[id]);
    }
    for (int id : siblings) {
      localShares[id] = (double) shares[id] / sum;
      normalizedShares[id] = localShares[id] * parentShare;
    }
  }

  /** Number of accounts (the root not counted). */
  public int size() {
    return names.length;
  }

  /** Whether an account of this name exists. */
  public boolean contains(String name) {
    return ids.containsKey(name);
  }

  /**
   * The dense id of an account.
   *
   * @throws IllegalArgumentException if there is no such account
   */
  public int id(String name) {
    Integer id = ids.get(name);
    if (id == null) {
      throw new IllegalArgumentException(
          "unknown account '" + name + "': add it to the account tree first");
    }
    return id;
  }

  public String name(int id) {
    return names[id];
  }

  /** The parent's id, or {@link #NO_PARENT} for a top-level account. */
  public int parent(int id) {
    return parents[id];
  }

  /** Raw shares as configured. */
  public long shares(int id) {
    return shares[id];
  }

  /** 0 for top-level accounts. */
  public int depth(int id) {
    return depths[id];
  }

  /** Accounts in the subtree of {@code id}, itself included; they are ids {@code id..id+n-1}. */
  public int subtreeSize(int id) {
    return subtreeSizes[id];
  }

  public boolean isLeaf(int id) {
    return children[id].length == 0;
  }

  /** Children's ids in name order (a copy). */
  public int[] children(int id) {
    return children[id].clone();
  }

  /** Top-level accounts' ids in name order (a copy). */
  public int[] topLevel() {
    return topLevel.clone();
  }

  /** Shares over the sum of siblings' shares, times the parent's normalized share; in (0, 1]. */
  public double normalizedShares(int id) {
    return normalizedShares[id];
  }

  /** Shares over the sum of siblings' shares (itself included); in (0, 1]. */
  public double localShares(int id) {
    return localShares[id];
  }

  int[] childrenView(int id) {
    return children[id];
  }

  int[] topLevelView() {
    return topLevel;
  }

  @Override
  public String toString() {
    var sb = new StringBuilder("AccountTree[");
    for (int id = 0; id < names.length; id++) {
      sb.append(id == 0 ? "" : ", ")
          .append(names[id])
          .append('(')
          .append(parents[id] == NO_PARENT ? ROOT : names[parents[id]])
          .append(", ")
          .append(shares[id])
          .append(')');
    }
    return sb.append(']').toString();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof AccountTree t
        && Arrays.equals(names, t.names)
        && Arrays.equals(parents, t.parents)
        && Arrays.equals(shares, t.shares);
  }

  @Override
  public int hashCode() {
    return 31 * Arrays.hashCode(names) + Arrays.hashCode(shares);
  }
}

package io.kairos.core.fairshare;

import static io.kairos.core.fairshare.AccountTreeTest.account;
import static io.kairos.core.fairshare.UsageTrackerTest.DAY;
import static io.kairos.core.fairshare.UsageTrackerTest.GIB;
import static io.kairos.core.fairshare.UsageTrackerTest.HALF_LIFE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.kairos.core.fairshare.FairShareFactor.Algorithm;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class FairShareFactorTest {
  /** One GPU per unit, 10 GPUs, a full half-life: dominant share = gpus / 10. */
  static UsageTracker gpusOverAHalfLife(AccountTree tree, String... accountAndGpus) {
    var u = new UsageTracker(tree, new Resources(10, 0, 0), 0);
    u.decayTo(HALF_LIFE);
    for (int i = 0; i < accountAndGpus.length; i += 2) {
      u.charge(
          accountAndGpus[i],
          new Resources(Long.parseLong(accountAndGpus[i + 1]), 0, 0),
          0,
          HALF_LIFE);
    }
    return u;
  }

  static List<String> ordered(FairShareFactor f, String... names) {
    var list = new ArrayList<>(List.of(names));
    list.sort(f.accountOrder());
    return list;
  }

  @Test
  void classicTwoEqualAccountsOneUsingTwiceAsMuch() {
    // U = 2/3 and 1/3, S = 1/2 each: F = 2^(-4/3) and 2^(-2/3).
    var tree = UsageTrackerTest.twoAccounts("heavy", "light");
    var u = new UsageTracker(tree, new Resources(3, 0, 0), 0);
    u.decayTo(DAY);
    u.charge("heavy", new Resources(2, 0, 0), 0, DAY);
    u.charge("light", new Resources(1, 0, 0), 0, DAY);
    var f = FairShareFactor.classic(u);
    assertThat(f.factor("heavy")).isCloseTo(0.39685026299204984, within(1e-14));
    assertThat(f.factor("light")).isCloseTo(0.6299605249474366, within(1e-14));
    assertThat(f.compare("light", "heavy")).isNegative();
    assertThat(ordered(f, "heavy", "light")).containsExactly("light", "heavy");
  }

  @Test
  void classicNoUsageIsOneAndExactlyTheShareIsOneHalf() {
    var tree = UsageTrackerTest.twoAccounts("a", "b");
    var u = gpusOverAHalfLife(tree, "a", "5");
    var f = FairShareFactor.classic(u);
    assertThat(f.factor("b")).isEqualTo(1.0);
    assertThat(f.factor("a")).isCloseTo(0.5, within(1e-15));
    assertThat(f.levelFairShare(tree.id("b"))).isEqualTo(Double.POSITIVE_INFINITY);
    assertThat(f.levelFairShare(tree.id("a"))).isCloseTo(0.5, within(1e-15));
  }

  @Test
  void classicThreeLevelsUsesEffectiveUsage() {
    // Shares: A 0.75, A1 0.375, A2 0.375, u1 0.09375, u2 0.28125, B 0.25, v 0.25.
    // Usage: u1 0.4, u2 0, A1 0.4, A2 0.2, A 0.6, v 0.4, B 0.4.
    // UE: A 0.6; A1 = 0.4*0.5 + 0.6*0.5 = 0.5; A2 = 0.2*0.5 + 0.6*0.5 = 0.4;
    //     u1 = 0.4*0.75 + 0.5*0.25 = 0.425; u2 = 0*0.25 + 0.5*0.75 = 0.375; B 0.4; v = 0.4.
    var tree = AccountTreeTest.threeLevels();
    var f = FairShareFactor.classic(gpusOverAHalfLife(tree, "u1", "4", "A2", "2", "v", "4"));
    double[][] expected = {
      // UE, F
      {0.6, Math.pow(2, -0.6 / 0.75)},
      {0.5, Math.pow(2, -0.5 / 0.375)},
      {0.4, Math.pow(2, -0.4 / 0.375)},
      {0.425, Math.pow(2, -0.425 / 0.09375)},
      {0.375, Math.pow(2, -0.375 / 0.28125)},
      {0.4, Math.pow(2, -0.4 / 0.25)},
      {0.4, Math.pow(2, -0.4 / 0.25)},
    };
    String[] names = {"A", "A1", "A2", "u1", "u2", "B", "v"};
    for (int i = 0; i < names.length; i++) {
      int id = tree.id(names[i]);
      assertThat(f.effectiveUsage(id))
          .as("UE of %s", names[i])
          .isCloseTo(expected[i][0], within(1e-14));
      assertThat(f.factor(id)).as("F of %s", names[i]).isCloseTo(expected[i][1], within(1e-14));
    }
    assertThat(ordered(f, "u1", "u2", "A2", "v")).containsExactly("A2", "u2", "v", "u1");
  }

  @Test
  void fairTreeRanksLeavesDepthFirstByLevelFairShare() {
    // Top: A uses 0.6 for 3 shares (0.2 per share), B 0.4 for 1 share: all of A comes first.
    // Under A: A2 0.2 < A1 0.4. Under A1: u2 0 < u1 0.4. Leaves met: A2, u2, u1, v.
    var tree = AccountTreeTest.threeLevels();
    var f = FairShareFactor.fairTree(gpusOverAHalfLife(tree, "u1", "4", "A2", "2", "v", "4"));
    assertThat(f.algorithm()).isEqualTo(Algorithm.FAIR_TREE);
    assertThat(f.factor("A2")).isEqualTo(1.0);
    assertThat(f.factor("u2")).isEqualTo(0.75);
    assertThat(f.factor("u1")).isEqualTo(0.5);
    assertThat(f.factor("v")).isEqualTo(0.25);
    assertThat(f.factor("A")).isEqualTo(1.0);
    assertThat(f.factor("A1")).isEqualTo(0.75);
    assertThat(f.factor("B")).isEqualTo(0.25);
    // u1 used more than its share, but its organisation is under its own: it beats v
    // (classic puts u1 last).
    assertThat(ordered(f, "v", "u1", "u2", "A2")).containsExactly("A2", "u2", "u1", "v");
    // Level FS: A = 0.75 / (0.6 / 1.0) = 1.25; B = 0.25 / 0.4 = 0.625.
    assertThat(f.levelFairShare(tree.id("A"))).isCloseTo(1.25, within(1e-14));
    assertThat(f.levelFairShare(tree.id("B"))).isCloseTo(0.625, within(1e-14));
  }

  @Test
  void fairTreeTiedIdleUsersShareTheBetterRank() {
    var tree =
        AccountTree.of(
            List.of(
                account("busy", "root", 1),
                account("idle1", "root", 1),
                account("idle2", "root", 1)));
    var f = FairShareFactor.fairTree(gpusOverAHalfLife(tree, "busy", "1"));
    assertThat(f.factor("idle1")).isEqualTo(1.0);
    assertThat(f.factor("idle2")).isEqualTo(1.0);
    assertThat(f.factor("busy")).isCloseTo(1.0 / 3, within(1e-15));
    assertThat(f.compare("idle1", "idle2")).isNegative(); // ties by name
    assertThat(f.compare("idle2", "idle2")).isZero();
  }

  @Test
  void drfEqualDominantSharesGiveEqualFactors() {
    // GPU-heavy and CPU-heavy accounts each use 3/4 of their dominant resource.
    var tree = UsageTrackerTest.twoAccounts("cpu", "gpu");
    var u = new UsageTracker(tree, new Resources(8, 64, 512 * GIB), 0);
    u.decayTo(DAY);
    u.charge("gpu", new Resources(6, 8, 64 * GIB), 0, DAY);
    u.charge("cpu", new Resources(1, 48, 128 * GIB), 0, DAY);
    var f = FairShareFactor.classic(u);
    assertThat(f.factor("gpu")).isCloseTo(Math.pow(2, -1.5), within(1e-14));
    assertThat(f.factor("cpu")).isCloseTo(f.factor("gpu"), within(1e-15));

    // One more hour of a single GPU tips the balance against the GPU-heavy account only if the
    // GPU is its dominant resource; for the CPU-heavy account a GPU hour changes nothing.
    var more = u.copy();
    more.charge("cpu", new Resources(1, 0, 0), 0, 3600);
    assertThat(FairShareFactor.classic(more).factor("cpu")).isEqualTo(f.factor("cpu"));
    more.charge("gpu", new Resources(1, 0, 0), 0, 3600);
    assertThat(FairShareFactor.classic(more).factor("gpu")).isLessThan(f.factor("gpu"));
  }

  @Test
  void classicUnderflowStillOrdersByUsageOverShares() {
    // 1000 shares to one, 1 to the other that used the whole cluster: UE/S is about 1001.
    var tree = AccountTree.of(List.of(account("big", "root", 1000), account("small", "root", 1)));
    var u = new UsageTracker(tree, new Resources(1, 0, 0), 0);
    u.decayTo(30 * HALF_LIFE);
    u.charge("small", new Resources(1, 0, 0), 0, 30 * HALF_LIFE);
    var deeper =
        AccountTree.of(List.of(account("big", "root", 100_000), account("small", "root", 1)));
    var v = new UsageTracker(deeper, new Resources(1, 0, 0), 0);
    v.decayTo(30 * HALF_LIFE);
    v.charge("small", new Resources(1, 0, 0), 0, 30 * HALF_LIFE);
    var f = FairShareFactor.classic(v);
    assertThat(f.factor("small")).isEqualTo(Double.MIN_VALUE).isPositive();
    assertThat(f.compare("big", "small")).isNegative();
    assertThat(FairShareFactor.classic(u).factor("small")).isPositive();
  }

  @Test
  void ofPicksTheAlgorithmAndOrdersAnyItemsByAccount() {
    var tree = UsageTrackerTest.twoAccounts("a", "b");
    var u = gpusOverAHalfLife(tree, "a", "5", "b", "1");
    for (Algorithm algorithm : Algorithm.values()) {
      var f = FairShareFactor.of(algorithm, u);
      assertThat(f.algorithm()).isEqualTo(algorithm);
      record Job(long id, String account) {}
      var jobs = new ArrayList<>(List.of(new Job(1, "a"), new Job(2, "b"), new Job(3, "a")));
      jobs.sort(f.<Job>byAccount(Job::account).thenComparingLong(Job::id));
      assertThat(jobs).extracting(Job::id).containsExactly(2L, 1L, 3L);
    }
  }

  @Test
  void unknownAccountsAreRefused() {
    var f = FairShareFactor.classic(gpusOverAHalfLife(UsageTrackerTest.twoAccounts("a", "b")));
    assertThatThrownBy(() -> f.compare("a", "zz"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown account 'zz'");
  }
}

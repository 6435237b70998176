package io.kairos.core.fairshare;

import static io.kairos.core.fairshare.AccountTreeTest.account;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import org.junit.jupiter.api.Test;

class UsageTrackerTest {
  static final long DAY = 24 * 3600;
  static final long HALF_LIFE = UsageTracker.DEFAULT_HALF_LIFE_SEC;
  static final long GIB = 1L << 30;

  static AccountTree twoAccounts(String a, String b) {
    return AccountTree.of(List.of(account(a, "root", 1), account(b, "root", 1)));
  }

  @Test
  void defaultHalfLifeIsSevenDays() {
    assertThat(UsageTracker.DEFAULT_HALF_LIFE_SEC).isEqualTo(7 * DAY);
    var u = new UsageTracker(twoAccounts("a", "b"), new Resources(1, 1, 1), 0);
    assertThat(u.halfLifeSec()).isEqualTo(7 * DAY);
  }

  @Test
  void usageHalvesAfterOneHalfLifeAndIsAQuarterAfterTwo() {
    var u = new UsageTracker(twoAccounts("a", "b"), new Resources(8, 64, 512 * GIB), 1_000);
    u.decayTo(1_000 + DAY);
    u.charge("a", new Resources(4, 16, 100 * GIB), 1_000, 1_000 + DAY);
    double gpu = u.usage("a", Resource.GPU);
    double mem = u.usage("a", Resource.MEMORY);

    u.decayTo(1_000 + DAY + HALF_LIFE);
    assertThat(u.usage("a", Resource.GPU)).isEqualTo(gpu / 2); // bit for bit
    assertThat(u.usage("a", Resource.MEMORY)).isEqualTo(mem / 2);

    u.decayTo(1_000 + DAY + 2 * HALF_LIFE);
    assertThat(u.usage("a", Resource.GPU)).isEqualTo(gpu / 4);

    var straight = new UsageTracker(twoAccounts("a", "b"), new Resources(8, 64, 512 * GIB), 1_000);
    straight.decayTo(1_000 + DAY);
    straight.charge("a", new Resources(4, 16, 100 * GIB), 1_000, 1_000 + DAY);
    straight.decayTo(1_000 + DAY + 2 * HALF_LIFE);
    assertThat(straight.usage("a", Resource.GPU)).isEqualTo(gpu / 4);
  }

  @Test
  void aChargeIsTheExactDecayedIntegral() {
    // One GPU for one half-life h, seen at its end: integral(0..h) 2^(-t/h) dt = h / (2 ln 2).
    long h = 1_000;
    var u = new UsageTracker(twoAccounts("a", "b"), new Resources(1, 1, 1), h, 0);
    u.decayTo(h);
    u.charge("a", new Resources(1, 0, 0), 0, h);
    assertThat(u.usage("a", Resource.GPU)).isCloseTo(h / (2 * Math.log(2)), within(1e-9));
    assertThat(u.usage("a", Resource.CPU)).isZero();

    // Seen one more half-life later: half of it.
    u.decayTo(2 * h);
    assertThat(u.usage("a", Resource.GPU)).isCloseTo(h / (4 * Math.log(2)), within(1e-9));
  }

  @Test
  void aShortChargeIsAboutRateTimesDuration() {
    var u = new UsageTracker(twoAccounts("a", "b"), new Resources(8, 1, 1), 0);
    u.decayTo(60);
    u.charge("a", new Resources(8, 0, 0), 0, 60);
    assertThat(u.usage("a", Resource.GPU)).isCloseTo(480.0, within(480.0 * 1e-4));
    assertThat(u.usage("a", Resource.GPU)).isLessThan(480.0);
  }

  @Test
  void chargingIsAdditiveOverTime() {
    var whole = new UsageTracker(twoAccounts("a", "b"), new Resources(8, 1, 1), 0);
    var split = whole.copy();
    whole.decayTo(10 * DAY);
    split.decayTo(10 * DAY);
    whole.charge("a", new Resources(3, 0, 0), DAY, 9 * DAY);
    split.charge("a", new Resources(3, 0, 0), DAY, 4 * DAY);
    split.charge("a", new Resources(3, 0, 0), 4 * DAY, 9 * DAY);
    assertThat(split.usage("a", Resource.GPU))
        .isCloseTo(whole.usage("a", Resource.GPU), within(whole.usage("a", Resource.GPU) * 1e-12));
  }

  @Test
  void chargeThenDecayEqualsDecayThenCharge() {
    var early = new UsageTracker(twoAccounts("a", "b"), new Resources(8, 1, 1), 0);
    var late = early.copy();
    early.decayTo(2 * DAY);
    early.charge("a", new Resources(2, 0, 0), 0, 2 * DAY);
    early.decayTo(5 * DAY);
    late.decayTo(5 * DAY);
    late.charge("a", new Resources(2, 0, 0), 0, 2 * DAY);
    assertThat(late.usage("a", Resource.GPU))
        .isCloseTo(early.usage("a", Resource.GPU), within(early.usage("a", Resource.GPU) * 1e-12));
  }

  @Test
  void aChildsChargeGoesToEveryAncestor() {
    var t = AccountTreeTest.threeLevels();
    var u = new UsageTracker(t, new Resources(10, 10, 10), 0);
    u.decayTo(DAY);
    u.charge("u2", new Resources(1, 2, 3), 0, DAY);
    double gpu = u.usage("u2", Resource.GPU);
    assertThat(gpu).isPositive();
    for (String name : List.of("A1", "A")) {
      for (Resource r : Resource.values()) {
        assertThat(u.usage(name, r)).isEqualTo(u.usage("u2", r));
      }
    }
    for (String name : List.of("u1", "A2", "B", "v")) {
      assertThat(u.usage(name, Resource.GPU)).isZero();
    }
    assertThat(u.totalUsage(Resource.CPU)).isEqualTo(u.usage("u2", Resource.CPU));
    assertThat(u.usage("u2", Resource.CPU)).isEqualTo(2 * gpu);
  }

  @Test
  void aFullClusterGivesExactFractionsOfCapacity() {
    // 3 GPUs, a runs 2 and b runs 1 the whole time: shares 2/3 and 1/3 whatever the time span.
    for (long span : new long[] {60, DAY, HALF_LIFE, 10 * HALF_LIFE}) {
      var u = new UsageTracker(twoAccounts("a", "b"), new Resources(3, 0, 0), 500);
      u.decayTo(500 + span);
      u.charge("a", new Resources(2, 0, 0), 500, 500 + span);
      u.charge("b", new Resources(1, 0, 0), 500, 500 + span);
      assertThat(u.share(u.tree().id("a"), Resource.GPU)).isCloseTo(2.0 / 3, within(1e-15));
      assertThat(u.dominantShare("b")).isCloseTo(1.0 / 3, within(1e-15));
      assertThat(u.decayedCapacity(Resource.GPU)).isEqualTo(u.totalUsage(Resource.GPU));
    }
  }

  @Test
  void decayedCapacityTendsToCapacityTimesMeanLife() {
    var u = new UsageTracker(twoAccounts("a", "b"), new Resources(2, 0, 0), 0);
    u.decayTo(HALF_LIFE);
    double tau = HALF_LIFE / Math.log(2);
    assertThat(u.decayedCapacity(Resource.GPU)).isCloseTo(2 * tau / 2, within(1e-6));
    u.decayTo(60 * HALF_LIFE);
    assertThat(u.decayedCapacity(Resource.GPU)).isCloseTo(2 * tau, within(1e-6));
    assertThat(u.decayedCapacity(Resource.CPU)).isZero();
  }

  @Test
  void gpuHeavyAndCpuHeavyAccountsHaveDifferentDominantResources() {
    var u = new UsageTracker(twoAccounts("gpu", "cpu"), new Resources(8, 64, 512 * GIB), 0);
    u.decayTo(3 * DAY);
    u.charge("gpu", new Resources(6, 8, 64 * GIB), 0, 3 * DAY);
    u.charge("cpu", new Resources(1, 48, 128 * GIB), 0, 3 * DAY);
    int g = u.tree().id("gpu");
    int c = u.tree().id("cpu");
    assertThat(u.dominantResource(g)).isEqualTo(Resource.GPU);
    assertThat(u.dominantResource(c)).isEqualTo(Resource.CPU);
    assertThat(u.dominantShare(g)).isCloseTo(0.75, within(1e-15));
    assertThat(u.dominantShare(c)).isCloseTo(0.75, within(1e-15));
    assertThat(u.share(g, Resource.CPU)).isCloseTo(0.125, within(1e-15));
    assertThat(u.share(c, Resource.MEMORY)).isCloseTo(0.25, within(1e-15));
    assertThat(u.share(c, Resource.GPU)).isCloseTo(0.125, within(1e-15));
  }

  @Test
  void aLightlyUsedResourceIsNotDominant() {
    // Only "m" ever used memory, one GiB of 512: its memory share is small, not 1.
    var u = new UsageTracker(twoAccounts("m", "g"), new Resources(8, 64, 512 * GIB), 0);
    u.decayTo(DAY);
    u.charge("m", new Resources(0, 0, GIB), 0, DAY);
    u.charge("g", new Resources(8, 0, 0), 0, DAY);
    assertThat(u.dominantShare("m")).isCloseTo(1.0 / 512, within(1e-15));
    assertThat(u.dominantResource(u.tree().id("m"))).isEqualTo(Resource.MEMORY);
    assertThat(u.dominantShare("g")).isCloseTo(1.0, within(1e-15));
  }

  @Test
  void aResourceWithoutCapacityIsNeverDominant() {
    var u = new UsageTracker(twoAccounts("a", "b"), new Resources(0, 64, GIB), 0);
    u.decayTo(DAY);
    u.charge("a", new Resources(4, 0, 0), 0, DAY);
    assertThat(u.usage("a", Resource.GPU)).isPositive();
    assertThat(u.dominantShare("a")).isZero();
  }

  @Test
  void nothingIsSharedBeforeTimePasses() {
    var u = new UsageTracker(twoAccounts("a", "b"), new Resources(1, 1, 1), 0);
    assertThat(u.dominantShare("a")).isZero();
    u.decayTo(0);
    assertThat(u.nowSec()).isZero();
  }

  @Test
  void copiesAreIndependent() {
    var u = new UsageTracker(twoAccounts("a", "b"), new Resources(1, 1, 1), 0);
    u.decayTo(DAY);
    var copy = u.copy();
    copy.charge("a", new Resources(1, 0, 0), 0, DAY);
    copy.decayTo(2 * DAY);
    assertThat(u.usage("a", Resource.GPU)).isZero();
    assertThat(u.nowSec()).isEqualTo(DAY);
  }

  @Test
  void timeOnlyMovesOn() {
    var u = new UsageTracker(twoAccounts("a", "b"), new Resources(1, 1, 1), 100);
    u.decayTo(200);
    assertThatThrownBy(() -> u.decayTo(150))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("decayTo(150) is before the tracker's time 200");
  }

  @Test
  void chargesMustLieBetweenStartAndNow() {
    var u = new UsageTracker(twoAccounts("a", "b"), new Resources(1, 1, 1), 100);
    u.decayTo(200);
    var one = new Resources(1, 0, 0);
    assertThatThrownBy(() -> u.charge("a", one, 150, 250))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("charge for a over [150, 250]")
        .hasMessageContaining("decayTo(toSec) first");
    assertThatThrownBy(() -> u.charge("a", one, 50, 150))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> u.charge("a", one, 180, 170))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> u.charge("nobody", one, 150, 160))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown account 'nobody'");
    u.charge("a", one, 150, 150);
    assertThat(u.usage("a", Resource.GPU)).isZero();
  }

  @Test
  void badArgumentsAreRefused() {
    var t = twoAccounts("a", "b");
    assertThatThrownBy(() -> new UsageTracker(t, new Resources(1, 1, 1), 0, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("halfLifeSec");
    assertThatThrownBy(() -> new Resources(-1, 0, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("resources.gpus");
  }
}

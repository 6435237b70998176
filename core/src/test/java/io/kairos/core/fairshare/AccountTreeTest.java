package io.kairos.core.fairshare;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.kairos.core.fairshare.AccountTree.Account;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

class AccountTreeTest {
  static Account account(String name, String parent, long shares) {
    return new Account(name, parent, shares);
  }

  /** org A (3) > teams A1 (1), A2 (1) > users u1 (1), u2 (3) under A1; org B (1) > user v (1). */
  static AccountTree threeLevels() {
    return AccountTree.of(
        List.of(
            account("A", "root", 3),
            account("B", "root", 1),
            account("A1", "A", 1),
            account("A2", "A", 1),
            account("u1", "A1", 1),
            account("u2", "A1", 3),
            account("v", "B", 1)));
  }

  @Test
  void normalizedSharesMultiplyDownTheTree() {
    var t = threeLevels();
    assertThat(t.normalizedShares(t.id("A"))).isEqualTo(0.75);
    assertThat(t.normalizedShares(t.id("B"))).isEqualTo(0.25);
    assertThat(t.normalizedShares(t.id("A1"))).isEqualTo(0.375);
    assertThat(t.normalizedShares(t.id("A2"))).isEqualTo(0.375);
    assertThat(t.normalizedShares(t.id("u1"))).isEqualTo(0.09375);
    assertThat(t.normalizedShares(t.id("u2"))).isEqualTo(0.28125);
    assertThat(t.normalizedShares(t.id("v"))).isEqualTo(0.25);
    assertThat(t.localShares(t.id("u2"))).isEqualTo(0.75);
  }

  @Test
  void idsArePreOrderInNameOrderWhateverTheInputOrder() {
    var t = threeLevels();
    var names = new ArrayList<String>();
    for (int id = 0; id < t.size(); id++) {
      names.add(t.name(id));
    }
    assertThat(names).containsExactly("A", "A1", "u1", "u2", "A2", "B", "v");
    assertThat(t.subtreeSize(t.id("A"))).isEqualTo(5);
    assertThat(t.subtreeSize(t.id("A1"))).isEqualTo(3);
    assertThat(t.parent(t.id("u2"))).isEqualTo(t.id("A1"));
    assertThat(t.parent(t.id("A"))).isEqualTo(AccountTree.NO_PARENT);
    assertThat(t.depth(t.id("u1"))).isEqualTo(2);
    assertThat(t.isLeaf(t.id("A2"))).isTrue();
    assertThat(t.children(t.id("A"))).containsExactly(t.id("A1"), t.id("A2"));
    assertThat(t.topLevel()).containsExactly(t.id("A"), t.id("B"));

    var shuffled =
        new ArrayList<>(
            List.of(
                account("v", "B", 1),
                account("u2", "A1", 3),
                account("A", "root", 3),
                account("A2", "A", 1),
                account("u1", "A1", 1),
                account("B", "root", 1),
                account("A1", "A", 1)));
    assertThat(AccountTree.of(shuffled)).isEqualTo(t);
    Collections.reverse(shuffled);
    assertThat(AccountTree.of(shuffled)).isEqualTo(t);
  }

  @Test
  void childrenSharesSumToTheParents() {
    var t = threeLevels();
    double top = 0;
    for (int id : t.topLevel()) {
      top += t.normalizedShares(id);
    }
    assertThat(top).isCloseTo(1.0, within(1e-15));
    for (int id = 0; id < t.size(); id++) {
      if (!t.isLeaf(id)) {
        double sum = 0;
        for (int c : t.children(id)) {
          sum += t.normalizedShares(c);
        }
        assertThat(sum).isCloseTo(t.normalizedShares(id), within(1e-15));
      }
    }
  }

  @Test
  void anEmptyTreeIsValid() {
    assertThat(AccountTree.of(List.of()).size()).isZero();
  }

  @Test
  void unknownParentIsRefusedNamingTheAccountAndTheFix() {
    assertThatThrownBy(() -> AccountTree.of(List.of(account("u", "team", 1))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'u'")
        .hasMessageContaining("unknown parent 'team'")
        .hasMessageContaining("define 'team'");
  }

  @Test
  void cycleIsRefusedWithThePath() {
    assertThatThrownBy(
            () ->
                AccountTree.of(
                    List.of(
                        account("ok", "root", 1),
                        account("a", "b", 1),
                        account("b", "c", 1),
                        account("c", "a", 1))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'a'")
        .hasMessageContaining("a -> b -> c -> a")
        .hasMessageContaining("child of 'root'");
  }

  @Test
  void accountUnderACycleIsRefused() {
    assertThatThrownBy(
            () ->
                AccountTree.of(
                    List.of(account("x", "y", 1), account("y", "x", 1), account("leaf", "x", 1))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("cycle");
  }

  @Test
  void selfParentIsRefused() {
    assertThatThrownBy(() -> AccountTree.of(List.of(account("a", "a", 1))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'a' is its own parent");
  }

  @Test
  void duplicateIsRefused() {
    assertThatThrownBy(
            () -> AccountTree.of(List.of(account("a", "root", 1), account("a", "root", 2))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'a' is defined twice")
        .hasMessageContaining("keep one");
  }

  @Test
  void nonPositiveSharesAreRefused() {
    for (long shares : new long[] {0, -5}) {
      assertThatThrownBy(() -> AccountTree.of(List.of(account("a", "root", shares))))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("'a' has shares " + shares)
          .hasMessageContaining("at least 1");
    }
  }

  @Test
  void rootAndBlankNamesAreRefused() {
    assertThatThrownBy(() -> AccountTree.of(List.of(account("root", "root", 1))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("reserved");
    assertThatThrownBy(() -> AccountTree.of(List.of(account(" ", "root", 1))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("blank name");
  }

  @Test
  void unknownAccountLookupNamesIt() {
    assertThatThrownBy(() -> threeLevels().id("nobody"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown account 'nobody'");
  }
}

package io.kairos.protocol.slurm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Host lists as Slurm 22.05's {@code scontrol show hostnames} and {@code show hostlist} wrote them
 * (each row below was run through the real scontrol of ../shared/peers/slurm and its output copied
 * here).
 */
class HostListTest {
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "gpu[001-004]         | gpu001 gpu002 gpu003 gpu004",
        "a[1-2,5],b3          | a1 a2 a5 b3",
        "n[01-3]              | n01 n02 n03",
        "rack[1-2]-n[01-02]   | rack1-n01 rack1-n02 rack2-n01 rack2-n02",
        "n[3,1]               | n3 n1",
        "a1 b2                | a1 b2",
        "'n[1-3],n5'          | n1 n2 n3 n5",
        "n1,n2                | n1 n2",
        "node7                | node7",
      })
  void expandsAsScontrolShowHostnames(String list, String expected) {
    assertThat(HostList.expand(list)).containsExactly(expected.split(" "));
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "x[1-2]y | Invalid hostlist: x[1-2]y",
        "n[5-3]  | Invalid hostlist: n[5-3]",
        "n[1-2   | Invalid hostlist: n[1-2",
        "n1-2]   | Invalid hostlist: n1-2]",
        "n[a-b]  | Invalid hostlist: n[a-b]",
      })
  void refusesWhatScontrolRefuses(String list, String message) {
    assertThatThrownBy(() -> HostList.expand(list))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(message);
  }

  @Test
  void aTypoCannotExpandWithoutBound() {
    assertThatThrownBy(() -> HostList.expand("n[1-999999999]"))
        .hasMessageContaining("more than " + HostList.MAX_HOSTS);
    assertThatThrownBy(() -> HostList.expand("a[1-1000]-b[1-1000]"))
        .hasMessageContaining("more than " + HostList.MAX_HOSTS);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "n3,n1,n2           | n[3,1-2]",
        "n1,n2,n3,n5        | n[1-3,5]",
        "a1,b1,a2           | a1,b1,a2",
        "gpu001,gpu002      | gpu[001-002]",
        "head               | head",
        "n09,n10            | n[09-10]",
      })
  void compressesAsScontrolShowHostlist(String hosts, String expected) {
    assertThat(HostList.compress(List.of(hosts.split(",")))).isEqualTo(expected);
  }

  @Test
  void emptyListsAreEmpty() {
    assertThat(HostList.expand("")).isEmpty();
    assertThat(HostList.compress(List.of())).isEmpty();
  }

  /** Whatever the names and their order, compressing then expanding gives them back. */
  @Test
  void compressThenExpandKeepsNamesAndOrder() {
    var random = new Random(18);
    for (int round = 0; round < 2_000; round++) {
      var hosts = new ArrayList<String>();
      int n = 1 + random.nextInt(12);
      for (int i = 0; i < n; i++) {
        String prefix = List.of("n", "gpu", "rack1-n", "a").get(random.nextInt(4));
        int number = random.nextInt(40);
        String digits =
            random.nextBoolean() ? String.format("%03d", number) : Integer.toString(number);
        String name = prefix + digits;
        if (!hosts.contains(name)) {
          hosts.add(name);
        }
      }
      String compressed = HostList.compress(hosts);
      assertThat(HostList.expand(compressed)).as("%s -> %s", hosts, compressed).isEqualTo(hosts);
    }
  }
}

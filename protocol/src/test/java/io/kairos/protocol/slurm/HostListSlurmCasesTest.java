package io.kairos.protocol.slurm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Slurm's host lists both ways. The compressed forms are what Slurm 22.05's {@code scontrol show
 * hostlist} printed for the same names (../shared/peers/slurm, run by hand), and {@code
 * SLURM_JOB_NODELIST} of a two-node batch job there was {@code gpu[001-002]}.
 */
class HostListSlurmCasesTest {
  static Stream<Arguments> slurms() {
    return Stream.of(
        Arguments.of("gpu001,gpu002,gpu003,gpu004", "gpu[001-004]"),
        Arguments.of("gpu001,gpu002", "gpu[001-002]"),
        Arguments.of("n1,n2,n3,m1,n5", "n[1-3],m1,n5"),
        Arguments.of("n01,n02,n3", "n[01-02,3]"),
        Arguments.of("n2,n1", "n[2,1]"),
        Arguments.of("gpu003,gpu001,gpu002", "gpu[003,001-002]"),
        Arguments.of("a,b1,b2", "a,b[1-2]"),
        Arguments.of("n1,n1", "n[1,1]"),
        Arguments.of("ttnusa1", "ttnusa1"),
        Arguments.of("", ""));
  }

  @ParameterizedTest(name = "{0} is {1}")
  @MethodSource("slurms")
  void compressesAsSlurmDoesAndExpandsBack(String names, String compressed) {
    List<String> list = names.isEmpty() ? List.of() : Arrays.asList(names.split(","));
    assertThat(HostList.compress(list)).isEqualTo(compressed);
    assertThat(HostList.expand(compressed)).containsExactlyElementsOf(list);
  }

  @Test
  void expandsSlurmsOtherForms() {
    assertThat(HostList.expand("a[1-2,5],b3")).containsExactly("a1", "a2", "a5", "b3");
    assertThat(HostList.expand("n[01-3]")).containsExactly("n01", "n02", "n03");
    assertThat(HostList.expand("r[1-2]n[1-2]")).containsExactly("r1n1", "r1n2", "r2n1", "r2n2");
    assertThat(HostList.expand(" gpu[08-10] ")).containsExactly("gpu08", "gpu09", "gpu10");
  }

  /** Bad lists are refused as scontrol refuses them, naming the list; empty entries are skipped. */
  @Test
  void badListsAreRefusedAsSlurmRefusesThem() {
    assertThatThrownBy(() -> HostList.expand("n[1-3")).hasMessage("Invalid hostlist: n[1-3");
    assertThatThrownBy(() -> HostList.expand("n[3-1]")).hasMessageContaining("counts down");
    assertThatThrownBy(() -> HostList.expand("n[a-b]")).hasMessage("Invalid hostlist: n[a-b]");
    assertThat(HostList.expand("n1,,n2")).containsExactly("n1", "n2");
    assertThatThrownBy(() -> HostList.expand("n[1-999999]"))
        .hasMessageContaining("Invalid hostlist: n[1-999999]");
  }

  /** Any list of names compresses to a form that expands to the same names in the same order. */
  @Test
  void compressThenExpandIsTheIdentity() {
    var random = new SplittableRandom(18);
    List<String> prefixes = List.of("gpu", "n", "rack1-n", "a", "node");
    for (int round = 0; round < 2000; round++) {
      var names = new ArrayList<String>();
      int size = 1 + random.nextInt(12);
      for (int i = 0; i < size; i++) {
        String prefix = prefixes.get(random.nextInt(prefixes.size()));
        int n = random.nextInt(20);
        String number =
            switch (random.nextInt(3)) {
              case 0 -> Integer.toString(n);
              case 1 -> String.format("%03d", n);
              default -> random.nextBoolean() ? "" : String.format("%02d", n);
            };
        names.add(prefix + number);
      }
      String compressed = HostList.compress(names);
      assertThat(HostList.expand(compressed)).as("%s -> %s", names, compressed).isEqualTo(names);
    }
  }
}

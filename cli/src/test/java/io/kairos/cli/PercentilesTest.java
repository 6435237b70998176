package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/** Nearest-rank percentiles, and the thread-safe sample list that feeds them. */
class PercentilesTest {
  @Test
  void oneToHundredGivesTheRankItself() {
    var p = Percentiles.of(LongStream.rangeClosed(1, 100).map(i -> 101 - i).toArray());
    assertThat(p.count()).isEqualTo(100);
    assertThat(p.value(50)).isEqualTo(50);
    assertThat(p.value(90)).isEqualTo(90);
    assertThat(p.value(99)).isEqualTo(99);
    assertThat(p.value(99.9)).isEqualTo(100);
    assertThat(p.value(100)).isEqualTo(100);
    assertThat(p.value(0.1)).isEqualTo(1);
    assertThat(p.min()).isEqualTo(1);
    assertThat(p.max()).isEqualTo(100);
  }

  @Test
  void nearestRankRoundsUp() {
    var p = Percentiles.of(10, 20, 30, 40);
    assertThat(p.value(50)).isEqualTo(20); // rank ceil(2.0) = 2
    assertThat(p.value(51)).isEqualTo(30); // rank ceil(2.04) = 3
    assertThat(p.value(99.9)).isEqualTo(40);
  }

  @Test
  void aThousandSamplesTailPercentiles() {
    var p = Percentiles.of(LongStream.range(0, 1000).toArray());
    assertThat(p.value(99)).isEqualTo(989);
    assertThat(p.value(99.9)).isEqualTo(998);
    assertThat(p.max()).isEqualTo(999);
  }

  @Test
  void oneSampleIsEveryPercentileAndNoneIsZero() {
    assertThat(Percentiles.of(7).value(1)).isEqualTo(7);
    assertThat(Percentiles.of(7).value(99.9)).isEqualTo(7);
    assertThat(Percentiles.of().value(50)).isZero();
    assertThat(Percentiles.of().max()).isZero();
  }

  @Test
  void theInputIsNotSortedInPlace() {
    long[] values = {3, 1, 2};
    Percentiles.of(values);
    assertThat(values).containsExactly(3, 1, 2);
  }

  @Test
  void percentOutsideRangeIsABug() {
    assertThatThrownBy(() -> Percentiles.of(1).value(0))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Percentiles.of(1).value(101))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void samplesGrowAndCount() throws InterruptedException {
    var samples = new Samples();
    Thread[] threads = new Thread[4];
    for (int t = 0; t < threads.length; t++) {
      threads[t] =
          Thread.ofPlatform()
              .start(
                  () -> {
                    for (int i = 1; i <= 1000; i++) {
                      samples.add(i);
                    }
                  });
    }
    for (Thread t : threads) {
      t.join();
    }
    assertThat(samples.size()).isEqualTo(4000);
    assertThat(samples.percentiles().value(50)).isEqualTo(500);
    assertThat(samples.percentiles().max()).isEqualTo(1000);
  }
}

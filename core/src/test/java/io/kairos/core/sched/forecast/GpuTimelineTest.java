package io.kairos.core.sched.forecast;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Conservative backfilling over GPU counts, placements checked by hand. */
class GpuTimelineTest {
  /**
   * 8 GPUs: 4 free now, 4 released at t=100. A (4 GPUs, 50 s) fits now; B (8 GPUs) waits for the
   * release; C (2 GPUs, 1000 s) would fit at 50 but B holds every GPU in [100, 110), so it goes
   * after B; D (9 GPUs) never fits and takes nothing.
   */
  @Test
  void eachJobTakesTheEarliestWindowBesideTheJobsBeforeIt() {
    var timeline = new GpuTimeline(0, 4, new long[] {GpuTimeline.release(100, 4)});
    assertThat(timeline.place(4, 50)).isEqualTo(0);
    assertThat(timeline.place(8, 10)).isEqualTo(100);
    assertThat(timeline.place(2, 1_000)).isEqualTo(110);
    assertThat(timeline.place(9, 1)).isEqualTo(-1);
    // D took nothing: 2 GPUs for 40 s still fit at 50, before B.
    assertThat(timeline.place(4, 50)).isEqualTo(50);
  }

  @Test
  void releasesInThePastCountAsFreeNowAndPackingRoundTrips() {
    long packed = GpuTimeline.release(1_234_567, 256);
    assertThat(GpuTimeline.endOf(packed)).isEqualTo(1_234_567);
    assertThat(GpuTimeline.gpusOf(packed)).isEqualTo(256);
    var timeline = new GpuTimeline(500, 0, new long[] {GpuTimeline.release(10, 2)});
    assertThat(timeline.place(2, 5)).isEqualTo(500);
  }

  /** Without backfill: C fits now, but not before B, the job ahead of it, at 100. */
  @Test
  void notBeforeKeepsAJobBehindTheOneAheadOfIt() {
    var timeline = new GpuTimeline(0, 4, new long[] {GpuTimeline.release(100, 4)});
    long b = timeline.place(8, 10);
    assertThat(b).isEqualTo(100);
    assertThat(timeline.place(1, 5, b)).isEqualTo(110);
    // Inside a step: a window may open at notBefore itself.
    assertThat(timeline.place(2, 5, 150)).isEqualTo(150);
    assertThat(timeline.place(8, 5, 150)).isEqualTo(155);
  }
}

package io.kairos.core.sched.preempt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kairos.core.model.Cluster;
import io.kairos.core.model.GangSpec;
import io.kairos.core.model.JobSpec;
import io.kairos.core.model.RunningJob;
import io.kairos.testkit.Clusters;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Victim search scenarios: who is preempted for a blocked gang, and who is not. */
class PreemptionPlannerTest {
  private static final long NOW = 50;
  private static final int[] N0 = {0};
  private static final int[] N1 = {1};
  private static final int[] ONE = {1};

  /**
   * A running job: where it runs, what preempting it costs, until when it is protected, and whether
   * the caller lists it as a candidate at all (rows are listed in preference order).
   */
  record Run(
      long id,
      GangSpec gang,
      int[] nodes,
      int[] tasks,
      long cost,
      long protectedUntil,
      boolean candidate) {
    static Run candidate(long id, GangSpec gang, int[] nodes, int[] tasks, long cost) {
      return new Run(id, gang, nodes, tasks, cost, 0, true);
    }

    static Run blocker(long id, GangSpec gang, int[] nodes, int[] tasks) {
      return new Run(id, gang, nodes, tasks, 0, 0, false);
    }

    Run protectedUntil(long sec) {
      return new Run(id, gang, nodes, tasks, cost, sec, candidate);
    }
  }

  /** {@code victims} null: no plan expected. */
  record Scenario(
      String name,
      Cluster cluster,
      List<Run> runs,
      GangSpec preemptor,
      List<Long> victims,
      int[] placementNodes) {
    @Override
    public String toString() {
      return name;
    }
  }

  private static Run oneGpu(long id, int node, long cost) {
    return Run.candidate(id, GangSpec.flexible(1), new int[] {node}, ONE, cost);
  }

  /** The 4+4 one-GPU jobs on two 8-GPU nodes (ids 1..4 on node 0, 5..8 on node 1). */
  private static List<Run> scattered(boolean interleaved) {
    var runs = new ArrayList<Run>();
    for (int i = 0; i < 4; i++) {
      if (interleaved) {
        runs.add(oneGpu(5 + i, 1, 10));
        runs.add(oneGpu(1 + i, 0, 10));
      } else {
        runs.add(oneGpu(1 + i, 0, 10));
      }
    }
    if (!interleaved) {
      for (int i = 0; i < 4; i++) {
        runs.add(oneGpu(5 + i, 1, 10));
      }
    }
    return runs;
  }

  private static List<Run> with(List<Run> runs, Run... more) {
    var all = new ArrayList<>(runs);
    all.addAll(List.of(more));
    return all;
  }

  static Stream<Scenario> scenarios() {
    Cluster two = Clusters.oneRack(2, 8);
    Cluster three = Clusters.oneRack(3, 8);
    GangSpec eight = GangSpec.perNode(8, 8);
    GangSpec sixteen = GangSpec.perNode(16, 8);
    return Stream.of(
        new Scenario(
            "fits without victims: no victim",
            two,
            List.of(oneGpu(1, 0, 10)),
            GangSpec.perNode(8, 8),
            List.of(),
            N1),
        new Scenario(
            "scattered 4+4 one-GPU jobs with blockers on both nodes: nobody is preempted",
            two,
            with(
                scattered(true),
                Run.blocker(9, GangSpec.flexible(4), N0, new int[] {4}),
                Run.blocker(10, GangSpec.flexible(4), N1, new int[] {4})),
            eight,
            null,
            null),
        new Scenario(
            "scattered 4+4, node 0 otherwise free: only the four on node 0",
            two,
            with(scattered(true), Run.blocker(10, GangSpec.flexible(4), N1, new int[] {4})),
            eight,
            List.of(1L, 2L, 3L, 4L),
            N0),
        new Scenario(
            "scattered 4+4, nodes otherwise empty: the four on one node, not all eight",
            two,
            scattered(false),
            eight,
            List.of(1L, 2L, 3L, 4L),
            N0),
        new Scenario(
            "scattered one-GPU jobs cannot help, the one 8-GPU job last in order can",
            two,
            with(
                List.of(oneGpu(1, 0, 1), oneGpu(2, 0, 1), oneGpu(3, 0, 1), oneGpu(4, 0, 1)),
                Run.blocker(9, GangSpec.flexible(4), N0, new int[] {4}),
                Run.candidate(5, GangSpec.perNode(8, 8), N1, ONE, 1_000)),
            eight,
            List.of(5L),
            N1),
        new Scenario(
            "a flexible gang of six does use scattered jobs when they make room",
            two,
            with(
                scattered(true),
                Run.blocker(9, GangSpec.flexible(4), N0, new int[] {4}),
                Run.blocker(10, GangSpec.flexible(4), N1, new int[] {4})),
            GangSpec.flexible(6),
            List.of(5L, 1L, 6L, 2L, 7L, 3L),
            null),
        new Scenario(
            "a preemptor needing two nodes preempts on two, sparing the third",
            three,
            List.of(
                Run.candidate(1, eight, N0, ONE, 10),
                Run.candidate(2, GangSpec.flexible(4), N1, new int[] {4}, 10),
                Run.candidate(3, GangSpec.flexible(4), N1, new int[] {4}, 10),
                Run.candidate(4, eight, new int[] {2}, ONE, 10)),
            sixteen,
            List.of(1L, 4L),
            new int[] {0, 2}),
        new Scenario(
            "a gang victim spanning two nodes is freed whole and is enough",
            two,
            List.of(
                Run.blocker(9, GangSpec.flexible(4), N1, new int[] {4}),
                Run.candidate(1, GangSpec.perNode(8, 4), new int[] {0, 1}, new int[] {1, 1}, 80)),
            eight,
            List.of(1L),
            N0),
        new Scenario(
            "a gang victim on two nodes plus what each frees makes room for two nodes",
            two,
            List.of(
                Run.candidate(1, GangSpec.perNode(8, 4), new int[] {0, 1}, new int[] {1, 1}, 80),
                Run.candidate(2, GangSpec.flexible(4), N0, new int[] {4}, 10),
                Run.candidate(3, GangSpec.flexible(4), N1, new int[] {4}, 10)),
            sixteen,
            List.of(1L, 2L, 3L),
            new int[] {0, 1}),
        new Scenario(
            "a protected victim is skipped for an unprotected one",
            two,
            List.of(
                Run.candidate(1, eight, N0, ONE, 10).protectedUntil(NOW + 1),
                Run.candidate(2, eight, N1, ONE, 500)),
            eight,
            List.of(2L),
            N1),
        new Scenario(
            "every useful victim protected: no plan",
            two,
            List.of(
                Run.candidate(1, eight, N0, ONE, 10).protectedUntil(NOW + 1),
                Run.blocker(2, eight, N1, ONE)),
            eight,
            null,
            null),
        new Scenario(
            "protection that ended is no protection",
            two,
            List.of(
                Run.candidate(1, eight, N0, ONE, 10).protectedUntil(NOW),
                Run.blocker(2, eight, N1, ONE)),
            eight,
            List.of(1L),
            N0),
        new Scenario(
            "the cheaper of two equally small sets, whatever the preference order",
            two,
            List.of(Run.candidate(1, eight, N0, ONE, 500), Run.candidate(2, eight, N1, ONE, 50)),
            eight,
            List.of(2L),
            N1),
        new Scenario(
            "fewer victims before less cost",
            two,
            List.of(
                oneGpu(1, 0, 1),
                oneGpu(2, 0, 1),
                Run.blocker(9, GangSpec.flexible(6), N0, new int[] {6}),
                Run.candidate(3, eight, N1, ONE, 500)),
            GangSpec.flexible(8),
            List.of(3L),
            N1),
        new Scenario(
            "equal cost and count: the caller's preference decides",
            two,
            List.of(Run.candidate(2, eight, N1, ONE, 50), Run.candidate(1, eight, N0, ONE, 50)),
            eight,
            List.of(2L),
            N1));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("scenarios")
  void victimSearch(Scenario s) {
    var fx = new PreemptionFixture(s.cluster());
    var candidates = new ArrayList<VictimCandidate>();
    for (Run r : s.runs()) {
      RunningJob job = fx.run(r.id(), r.gang(), r.nodes(), r.tasks());
      if (r.candidate()) {
        candidates.add(new VictimCandidate(job, r.cost(), r.protectedUntil()));
      }
    }

    var plan =
        new PreemptionPlanner(s.cluster())
            .plan(fx.store.snapshot(), s.preemptor(), -1, candidates, NOW);

    if (s.victims() == null) {
      assertThat(plan).isEmpty();
      return;
    }
    assertThat(plan).isPresent();
    assertThat(plan.get().victims())
        .extracting(v -> v.id().value())
        .containsExactlyElementsOf(s.victims());
    if (s.placementNodes() != null) {
      assertThat(plan.get().placement().nodes()).containsExactly(s.placementNodes());
    }
    PreemptionFixture.assertPlanStarts(fx.store, plan.get(), 1_000, JobSpec.of(s.preemptor(), 100));
  }

  @Test
  void candidateListedTwiceIsABug() {
    var fx = new PreemptionFixture(Clusters.oneRack(1, 8));
    var job = fx.run(1, GangSpec.perNode(8, 8), N0, ONE);
    var planner = new PreemptionPlanner(fx.cluster);
    var twice = List.of(VictimCandidate.of(job, 1), VictimCandidate.of(job, 1));

    assertThatThrownBy(
            () -> planner.plan(fx.store.snapshot(), GangSpec.perNode(8, 8), -1, twice, NOW))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("listed twice");
  }

  @Test
  void candidatesPastTheCapAreNotConsidered() {
    var fx = new PreemptionFixture(Clusters.oneRack(2, 8));
    var candidates = new ArrayList<VictimCandidate>();
    for (Run r : scattered(false)) {
      candidates.add(VictimCandidate.of(fx.run(r.id(), r.gang(), r.nodes(), r.tasks()), 1));
    }
    fx.run(9, GangSpec.flexible(4), N1, new int[] {4});
    var planner =
        new PreemptionPlanner(fx.cluster, io.kairos.core.sched.place.PlacementStrategy.TOPOLOGY, 3);

    assertThat(planner.plan(fx.store.snapshot(), GangSpec.perNode(8, 8), -1, candidates, NOW))
        .isEmpty();
    assertThat(
            new PreemptionPlanner(fx.cluster)
                .plan(fx.store.snapshot(), GangSpec.perNode(8, 8), -1, candidates, NOW))
        .hasValueSatisfying(p -> assertThat(p.victims()).hasSize(4));
  }

  @Test
  void victimsOnNodesOfAnotherGpuModelAreNotPreempted() {
    var cluster =
        Cluster.of(
            List.of(
                new io.kairos.core.model.NodeSpec(
                    "a", "H100", 8, 0, 64, 1L << 40, java.util.Map.of(), "z", "b", "r", 8),
                new io.kairos.core.model.NodeSpec(
                    "b", "A100", 8, 0, 64, 1L << 40, java.util.Map.of(), "z", "b", "r", 8)));
    var fx = new PreemptionFixture(cluster);
    var onA100 = fx.run(1, GangSpec.perNode(8, 8), N1, ONE);
    var onH100 = fx.run(2, GangSpec.perNode(8, 8), N0, ONE);

    var plan =
        new PreemptionPlanner(cluster)
            .plan(
                fx.store.snapshot(),
                GangSpec.perNode(8, 8),
                cluster.modelIdOf("H100"),
                List.of(VictimCandidate.of(onA100, 1), VictimCandidate.of(onH100, 1_000)),
                NOW);

    assertThat(plan).hasValueSatisfying(p -> assertThat(p.victims()).containsExactly(onH100));
  }
}

package io.kairos.core.sched.place;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.core.model.Cluster;
import io.kairos.core.model.GangSpec;
import io.kairos.core.model.NodeSpec;
import io.kairos.core.model.Placement;
import io.kairos.core.model.TaskShape;
import io.kairos.core.model.TopologyLevel;
import io.kairos.core.sched.Policy;
import io.kairos.core.sched.Reason;
import io.kairos.testkit.Clusters;
import io.kairos.testkit.Jobs;
import io.kairos.testkit.Passes;
import io.kairos.testkit.SchedulerHarness;
import io.kairos.testkit.StoreState;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Gang placement: all or nothing, lowest topology domain first, then best fit. */
class GangPlacerTest {

  /** Places {@code gang} (any model) on what is free in the harness's store now. */
  private static Placement place(SchedulerHarness h, GangSpec gang) {
    var ledger = new Ledger(h.store().snapshot(), h.nowSec());
    return new GangPlacer(h.cluster()).place(gang, -1, ledger.now(0), true);
  }

  private static TopologyLevel span(Cluster c, Placement p) {
    return c.spanOf(p.nodes(), p.nodeCount());
  }

  /** Two racks of 4 one-GPU nodes in one block: rack r0 = nodes 0..3, r1 = nodes 4..7. */
  private static SchedulerHarness twoRacks() {
    return SchedulerHarness.of(
        Clusters.builder().rack("b0", "r0", 4, 1).rack("b0", "r1", 4, 1).build());
  }

  @Test
  void gangThatFitsOneRackGoesToThatRackRatherThanSpreading() {
    var h = twoRacks();
    h.occupy(0, 0b1);
    h.occupy(1, 0b1); // r0: 2 free, r1: 4 free

    var p = place(h, GangSpec.flexible(3));

    assertThat(p.nodes()).containsExactly(4, 5, 6);
    assertThat(span(h.cluster(), p)).isEqualTo(TopologyLevel.RACK);
  }

  /** First fit, the comparison strategy, takes nodes in order and spreads the same gang. */
  @Test
  void firstFitTakesNodesInOrderAcrossRacks() {
    var h = twoRacks();
    h.occupy(0, 0b1);
    h.occupy(1, 0b1); // r0: 2 free, r1: 4 free
    var ledger = new Ledger(h.store().snapshot(), h.nowSec());

    var p =
        new GangPlacer(h.cluster(), PlacementStrategy.FIRST_FIT)
            .place(GangSpec.flexible(3), -1, ledger.now(0), true);

    assertThat(p.nodes()).containsExactly(2, 3, 4);
    assertThat(span(h.cluster(), p)).isEqualTo(TopologyLevel.BLOCK);
    assertThat(
            new GangPlacer(h.cluster(), PlacementStrategy.FIRST_FIT)
                .place(GangSpec.flexible(7), -1, ledger.now(0), true))
        .isNull();
  }

  @Test
  void amongRacksThatHoldTheGangTheTightestWins() {
    var h = twoRacks();
    h.occupy(0, 0b1); // r0: 3 free, r1: 4 free

    assertThat(place(h, GangSpec.flexible(3)).nodes()).containsExactly(1, 2, 3);
    assertThat(place(h, GangSpec.flexible(4)).nodes()).containsExactly(4, 5, 6, 7);
  }

  @Test
  void gangThatNoRackHoldsSpansTheBlock() {
    var h = twoRacks();
    h.occupy(0, 0b1);
    h.occupy(4, 0b1); // 3 + 3 free

    var p = place(h, GangSpec.flexible(4));

    assertThat(p.totalTasks()).isEqualTo(4);
    assertThat(span(h.cluster(), p)).isEqualTo(TopologyLevel.BLOCK);
  }

  /**
   * Two blocks of two racks of two one-GPU nodes: b0 = nodes 0..3 (racks 0-1, 2-3), b1 = nodes
   * 4..7. Node 0 is busy: b0 has 3 free, b1 has 4.
   */
  static Stream<Arguments> smallestDomain() {
    return Stream.of(
        Arguments.of(
            Named.of("2 GPUs fit a whole rack: the full rack of b0", 2),
            new int[] {2, 3},
            TopologyLevel.RACK),
        Arguments.of(
            Named.of("3 GPUs fit no rack: the tighter block b0", 3),
            new int[] {1, 2, 3},
            TopologyLevel.BLOCK),
        Arguments.of(
            Named.of("4 GPUs: only block b1 holds them", 4),
            new int[] {4, 5, 6, 7},
            TopologyLevel.BLOCK),
        Arguments.of(
            Named.of("5 GPUs: no block holds them, the zone does", 5), null, TopologyLevel.ZONE));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("smallestDomain")
  void smallestDomainThatHoldsTheGangWins(int gpus, int[] nodes, TopologyLevel level) {
    var h = SchedulerHarness.of(Cluster.uniform(8, 1, 2, 2));
    h.occupy(0, 0b1);

    var p = place(h, GangSpec.flexible(gpus));

    assertThat(p.totalTasks()).isEqualTo(gpus);
    if (nodes != null) {
      assertThat(p.nodes()).containsExactly(nodes);
    }
    assertThat(span(h.cluster(), p)).isEqualTo(level);
  }

  /** 4 nodes x 8 GPUs with 8, 3, 5 and 2 GPUs free. */
  static Stream<Arguments> bestFit() {
    return Stream.of(
        Arguments.of(Named.of("1 GPU -> the node with 2 free", GangSpec.flexible(1)), 3),
        Arguments.of(Named.of("2 GPUs -> the node with 2 free", GangSpec.flexible(2)), 3),
        Arguments.of(Named.of("3 GPUs -> the node with 3 free", GangSpec.flexible(3)), 1),
        Arguments.of(Named.of("4 GPUs -> the node with 5 free", GangSpec.flexible(4)), 2),
        Arguments.of(Named.of("6 GPUs -> the empty node", GangSpec.flexible(6)), 0),
        Arguments.of(
            Named.of(
                "2 tasks x 2 GPUs -> the node with 5 free",
                new GangSpec(2, TaskShape.gpus(2), false)),
            2),
        Arguments.of(
            Named.of(
                "1 task of 3 on distinct nodes -> the node with 3 free", GangSpec.perNode(3, 3)),
            1));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("bestFit")
  void singleNodeGangGoesToTheNodeWithTheFewestFreeGpusThatHoldIt(GangSpec gang, int node) {
    var h = SchedulerHarness.of(Clusters.oneRack(4, 8));
    h.occupy(1, 0b0001_1111); // 3 free
    h.occupy(2, 0b0000_0111); // 5 free
    h.occupy(3, 0b0011_1111); // 2 free

    var p = place(h, gang);

    assertThat(p.nodes()).containsExactly(node);
    assertThat(p.totalTasks()).isEqualTo(gang.tasks());
  }

  @Test
  void bestFitAlsoHoldsWhenPlacedThroughThePass() {
    var h = SchedulerHarness.of(Clusters.oneRack(4, 8));
    h.occupy(1, 0b0001_1111);
    h.occupy(2, 0b0000_0111);
    h.occupy(3, 0b0011_1111);
    h.submit(Jobs.gpus(3));

    var start = h.runPass().starts().getFirst();

    assertThat(start.placement().nodes()).containsExactly(1);
    assertThat(start.placement().gpuMask(0)).isEqualTo(0b1110_0000L);
  }

  @Test
  void perNodeGangNeverPutsTwoTasksOnOneNode() {
    var h = SchedulerHarness.of(Clusters.oneRack(4, 8));

    var p = place(h, GangSpec.perNode(8, 2));

    assertThat(p.nodeCount()).isEqualTo(4);
    for (int i = 0; i < p.nodeCount(); i++) {
      assertThat(p.tasksOn(i)).isEqualTo(1);
    }
  }

  @Test
  void perNodeGangWiderThanTheNodeCountHasNoPlacementEvenWithGpusToSpare() {
    var h = SchedulerHarness.of(Clusters.oneRack(2, 8));

    assertThat(place(h, GangSpec.perNode(3, 1))).isNull();
    assertThat(place(h, GangSpec.flexible(3)).nodeCount()).isEqualTo(1);
  }

  @Test
  void perNodeGangSkipsNodesWithoutRoomForATask() {
    var h = SchedulerHarness.of(Clusters.oneRack(3, 4));
    h.occupy(1, 0b0111); // node 1 has 1 free: no room for a 2-GPU task

    var p = place(h, GangSpec.perNode(4, 2));

    assertThat(p.nodes()).containsExactly(0, 2);
  }

  @Test
  void gangThatCannotBePlacedWholeGetsNoPartialStart() {
    // 2 nodes x 4 GPUs with 2 free on each: 4 GPUs free, but no node holds a 4-GPU task.
    var h = SchedulerHarness.of(Clusters.oneRack(2, 4)).policy(Policy.FCFS);
    h.occupy(0, 0b0011);
    h.occupy(1, 0b0011);
    var job = h.submit(Jobs.perNode(4, 4));
    var before = StoreState.of(h.store());

    assertThat(place(h, GangSpec.perNode(4, 4))).isNull();
    var pass = h.runPass();
    h.commit(pass);

    assertThat(pass.starts()).isEmpty();
    assertThat(Passes.reason(pass, job)).contains(Reason.NO_PLACEMENT);
    assertThat(StoreState.of(h.store())).isEqualTo(before);
  }

  @Test
  void gangLargerThanWhatIsFreeGetsNoPartialStart() {
    var h = SchedulerHarness.of(Clusters.oneRack(4, 1)).policy(Policy.FCFS);
    h.occupy(0, 0b1);
    var job = h.submit(Jobs.gpus(4));
    var before = StoreState.of(h.store());

    var pass = h.runPass();
    h.commit(pass);

    assertThat(pass.starts()).isEmpty();
    assertThat(Passes.reason(pass, job)).contains(Reason.INSUFFICIENT_GPUS);
    assertThat(StoreState.of(h.store())).isEqualTo(before);
  }

  @Test
  void gangAsLargeAsTheClusterTakesEveryGpu() {
    var h = SchedulerHarness.of(Cluster.uniform(6, 4, 2, 2));

    var p = place(h, GangSpec.flexible(24));

    assertThat(p.nodeCount()).isEqualTo(6);
    assertThat(p.totalTasks()).isEqualTo(24);
    assertThat(span(h.cluster(), p)).isEqualTo(TopologyLevel.ZONE);
  }

  @Test
  void lastPartialNodeIsTheBestFitForWhatRemains() {
    // One rack: node 0 with 4 free, node 1 with 2 free, node 2 with 3 free. 6 GPUs: node 0
    // takes 4, the remaining 2 go to node 1 (exactly 2 free) rather than node 2.
    var h = SchedulerHarness.of(Clusters.oneRack(3, 4));
    h.occupy(1, 0b0011);
    h.occupy(2, 0b0001);

    var p = place(h, GangSpec.flexible(6));

    assertThat(p.nodes()).containsExactly(0, 1);
    assertThat(p.tasksOn(0)).isEqualTo(4);
    assertThat(p.tasksOn(1)).isEqualTo(2);
  }

  @Test
  void gangGoesOnlyToNodesOfTheModelItAsks() {
    var cluster =
        Cluster.of(
            java.util.List.of(
                model("n0", "H100"),
                model("n1", "A100"),
                model("n2", "A100"),
                model("n3", "H100")));
    var h = SchedulerHarness.of(cluster);
    var ledger = new Ledger(h.store().snapshot(), 0);
    var placer = new GangPlacer(cluster);

    var a100 = placer.place(GangSpec.perNode(8, 4), cluster.modelIdOf("A100"), ledger.now(0), true);
    var none = placer.place(GangSpec.flexible(1), cluster.modelIdOf("B200"), ledger.now(0), true);
    var tooMany =
        placer.place(GangSpec.perNode(12, 4), cluster.modelIdOf("A100"), ledger.now(0), true);

    assertThat(a100.nodes()).containsExactly(1, 2);
    assertThat(none).isNull();
    assertThat(tooMany).isNull();
  }

  @Test
  void tasksNeedingCpusDoNotShareANodeWithoutEnoughCpus() {
    // Two nodes of 4 GPUs and 4 CPUs; a gang of 2 tasks x (1 GPU, 3 CPUs) fits no single node.
    var cluster = Cluster.of(java.util.List.of(cpus("n0", 4), cpus("n1", 4)));
    var h = SchedulerHarness.of(cluster);
    var gang = new GangSpec(2, new TaskShape(1, 3, 0), false);

    var p = place(h, gang);

    assertThat(p.nodes()).containsExactly(0, 1);
  }

  private static NodeSpec model(String name, String model) {
    return new NodeSpec(name, model, 4, 0, 64, 1L << 40, Map.of(), "z0", "b0", "r0", 4);
  }

  private static NodeSpec cpus(String name, int cpus) {
    return new NodeSpec(name, "gpu", 4, 0, cpus, 1L << 40, Map.of(), "z0", "b0", "r0", 4);
  }
}

package io.kairos.protocol.slurm;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Slurm's block distribution of a job's tasks over its nodes, and SLURM_TASKS_PER_NODE. */
class TaskLayoutTest {
  @ParameterizedTest(name = "ntasks={0} perNode={1} nodes={2}")
  @CsvSource(
      delimiter = '|',
      value = {
        "0 | 0 | 3 | 1 1 1",
        "0 | 4 | 2 | 4 4",
        "8 | 8 | 1 | 8",
        "5 | 0 | 2 | 3 2",
        "4 | 0 | 4 | 1 1 1 1",
        "7 | 4 | 2 | 4 3",
        "6 | 0 | 4 | 2 2 1 1",
      })
  void spreadsAsSlurmsBlockDistribution(int ntasks, int perNode, int nodes, String expected) {
    var layout = new TaskLayout(ntasks, perNode, 0);
    List<Integer> counts =
        java.util.Arrays.stream(expected.split(" ")).map(Integer::valueOf).toList();
    assertThat(layout.perNode(nodes)).isEqualTo(counts);
    assertThat(layout.total(nodes)).isEqualTo(counts.stream().mapToInt(i -> i).sum());
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {"4 4 4 | 4(x3)", "2 2 1 | 2(x2),1", "3 2 | 3,2", "1 | 1", "2 1 1 2 | 2,1(x2),2"})
  void writesSlurmTasksPerNode(String counts, String expected) {
    var list = java.util.Arrays.stream(counts.split(" ")).map(Integer::valueOf).toList();
    assertThat(TaskLayout.slurmTasksPerNode(list)).isEqualTo(expected);
  }

  @Test
  void refusesLayoutsThatLeaveANodeIdleOrOverflowItsGpus() {
    assertThat(new TaskLayout(1, 0, 0).problem(2, 0)).get().asString().contains("smaller");
    assertThat(new TaskLayout(9, 4, 0).problem(2, 0)).get().asString().contains("more than");
    assertThat(new TaskLayout(4, 4, 0).problem(2, 0))
        .get()
        .asString()
        .contains("leaves a node without a task");
    assertThat(new TaskLayout(0, 4, 2).problem(2, 4)).get().asString().contains("gpusPerTask (2)");
    assertThat(new TaskLayout(0, 4, 1).problem(2, 4)).isEmpty();
    assertThat(new TaskLayout(0, TaskLayout.MAX_PER_NODE + 1, 0).problem(1, 0)).isPresent();
  }

  /** Every accepted layout: each node runs at least one task, ranks count up without a gap. */
  @Test
  void acceptedLayoutsGiveEveryNodeATask() {
    var random = new Random(4);
    for (int round = 0; round < 5_000; round++) {
      int nodes = 1 + random.nextInt(8);
      int perNode = random.nextInt(5);
      int ntasks = random.nextInt(40);
      var layout = new TaskLayout(ntasks, perNode, 0);
      if (layout.problem(nodes, 8).isPresent()) {
        continue;
      }
      List<Integer> counts = layout.perNode(nodes);
      assertThat(counts).hasSize(nodes).allMatch(c -> c >= 1);
      if (ntasks > 0) {
        assertThat(layout.total(nodes)).isEqualTo(ntasks);
      }
      if (perNode > 0) {
        assertThat(counts).allMatch(c -> c <= perNode);
      }
      assertThat(TaskLayout.firstRank(counts, nodes - 1) + counts.getLast())
          .isEqualTo(layout.total(nodes));
    }
  }
}

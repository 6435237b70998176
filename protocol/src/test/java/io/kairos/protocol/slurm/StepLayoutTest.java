package io.kairos.protocol.slurm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * srun's layout of a step inside a job's allocation, as Slurm 22.05's srun laid out the same asks
 * (the warnings are its words).
 */
class StepLayoutTest {
  private static final List<String> FOUR = List.of("n1", "n2", "n3", "n4");
  private static final List<Integer> IDLE = List.of(0, 0, 0, 0);

  private static StepLayout.Ask ask(
      Integer nodes, Integer ntasks, Integer perNode, List<String> nodelist) {
    return new StepLayout.Ask(nodes, ntasks, perNode, nodelist, List.of());
  }

  @Test
  void nothingAskedIsOneTaskOnEveryNode() {
    var layout = StepLayout.of(ask(null, null, null, null), FOUR, IDLE);
    assertThat(layout.nodes()).containsExactly(0, 1, 2, 3);
    assertThat(layout.tasksPerNode()).containsExactly(1, 1, 1, 1);
    assertThat(layout.warnings()).isEmpty();
  }

  @Test
  void oneTaskRunsOnTheFirstNodeWithSlurmsWarning() {
    var layout = StepLayout.of(ask(null, 1, null, null), FOUR, IDLE);
    assertThat(layout.nodes()).containsExactly(0);
    assertThat(layout.tasksPerNode()).containsExactly(1);
    assertThat(layout.warnings())
        .containsExactly("Warning: can't run 1 processes on 4 nodes, setting nnodes to 1");
  }

  @Test
  void aNamedNodeIsTaken() {
    var layout = StepLayout.of(ask(1, 1, null, List.of("n3")), FOUR, IDLE);
    assertThat(layout.nodes()).containsExactly(2);
    assertThat(layout.tasks()).isEqualTo(1);
  }

  @Test
  void tasksPerNodeMultiplyOut() {
    var layout = StepLayout.of(ask(2, null, 4, null), FOUR, IDLE);
    assertThat(layout.nodes()).containsExactly(0, 1);
    assertThat(layout.tasksPerNode()).containsExactly(4, 4);
  }

  @Test
  void tasksSpreadByBlocks() {
    var layout = StepLayout.of(ask(2, 5, null, null), FOUR, IDLE);
    assertThat(layout.tasksPerNode()).containsExactly(3, 2);
  }

  @Test
  void tasksPerNodeThatDoNotMultiplyOutAreIgnoredWithSlurmsWarning() {
    var layout = StepLayout.of(ask(2, 3, 4, null), FOUR, IDLE);
    assertThat(layout.tasksPerNode()).containsExactly(2, 1);
    assertThat(layout.warnings().getFirst()).startsWith("Warning: can't honor --ntasks-per-node");
  }

  @Test
  void concurrentStepsSpreadAwayFromBusyNodes() {
    var layout = StepLayout.of(ask(1, 1, null, null), FOUR, List.of(1, 1, 0, 1));
    assertThat(layout.nodes()).containsExactly(2);
  }

  @Test
  void excludedNodesAreNeverTaken() {
    var layout =
        StepLayout.of(new StepLayout.Ask(2, null, null, null, List.of("n1", "n2")), FOUR, IDLE);
    assertThat(layout.nodes()).containsExactly(2, 3);
  }

  @Test
  void aStepCannotLeaveItsJobsAllocation() {
    assertThatThrownBy(() -> StepLayout.of(ask(5, null, null, null), FOUR, IDLE))
        .hasMessage("Only allocated 4 nodes asked for 5");
    assertThatThrownBy(() -> StepLayout.of(ask(null, null, null, List.of("other")), FOUR, IDLE))
        .hasMessageStartingWith("Requested node configuration is not available")
        .hasMessageContaining("n[1-4]");
  }

  @Test
  void moreNamedNodesThanAskedKeepsTheFirst() {
    var layout = StepLayout.of(ask(1, null, null, List.of("n4", "n2")), FOUR, IDLE);
    assertThat(layout.nodes()).containsExactly(3);
    assertThat(layout.warnings().getFirst()).startsWith("error: Required nodelist includes more");
  }
}

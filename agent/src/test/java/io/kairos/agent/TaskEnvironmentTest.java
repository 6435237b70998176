package io.kairos.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kairos.protocol.agent.TaskAssignment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The rank variables of each process when a node runs several (Slurm's {@code --ntasks-per-node},
 * {@code --gpus-per-task}) and of a step's tasks, as a Slurm 22.05 set them for the same layout.
 */
class TaskEnvironmentTest {
  private static final Path DATA = Path.of("/var/lib/kairos");
  private static final Map<String, String> KAIROS =
      Map.of(
          TaskEnvironment.BIN, "/var/lib/kairos/bin",
          TaskEnvironment.SERVER, "https://10.0.0.1:8080",
          TaskEnvironment.CA, "/var/lib/kairos/bin/ca.pem");

  /** Entry {@code task} of a job on {@code nodes}, each running {@code perNode} processes. */
  private static TaskAssignment entry(
      int task,
      List<String> nodes,
      List<Integer> perNode,
      List<Integer> gpus,
      Integer gpusPerTask,
      Integer step,
      List<String> jobNodes) {
    return new TaskAssignment(
        42,
        1,
        task,
        nodes.size(),
        nodes,
        "train",
        "alice",
        List.of("python", "train.py"),
        Map.of("PATH", "/usr/bin"),
        null,
        gpus,
        0,
        0,
        0,
        "10.0.0.2",
        null,
        "TERM",
        30,
        null,
        0,
        null,
        false,
        0,
        null,
        null,
        null,
        step,
        perNode,
        gpusPerTask,
        jobNodes,
        "kstep-secret");
  }

  private static Map<String, String> env(TaskAssignment a, String node, int local) {
    return LaunchSpec.of(a, node, DATA, Map.of(), KAIROS, local).env();
  }

  @Test
  void fourTasksPerNodeOnTwoNodesCountRanksNodeByNode() {
    var nodes = List.of("gpu01", "gpu02");
    var seen = new ArrayList<String>();
    for (int task = 0; task < 2; task++) {
      var a = entry(task, nodes, List.of(4, 4), List.of(0, 1, 2, 3), 1, null, null);
      for (int local = 0; local < 4; local++) {
        var env = env(a, nodes.get(task), local);
        int rank = task * 4 + local;
        assertThat(env)
            .containsEntry("SLURM_PROCID", Integer.toString(rank))
            .containsEntry("RANK", Integer.toString(rank))
            .containsEntry("SLURM_LOCALID", Integer.toString(local))
            .containsEntry("LOCAL_RANK", Integer.toString(local))
            .containsEntry("SLURM_NODEID", Integer.toString(task))
            .containsEntry("NODE_RANK", Integer.toString(task))
            .containsEntry("WORLD_SIZE", "8")
            .containsEntry("SLURM_NTASKS", "8")
            .containsEntry("LOCAL_WORLD_SIZE", "4")
            .containsEntry("SLURM_NNODES", "2")
            .containsEntry("SLURM_JOB_NODELIST", "gpu[01-02]")
            .containsEntry("SLURM_TASKS_PER_NODE", "4(x2)")
            .containsEntry("CUDA_VISIBLE_DEVICES", Integer.toString(local))
            .containsEntry("SLURM_GPUS_PER_TASK", "1")
            .doesNotContainKey("SLURM_STEP_ID");
        seen.add(env.get("RANK"));
      }
    }
    assertThat(seen).containsExactly("0", "1", "2", "3", "4", "5", "6", "7");
  }

  @Test
  void withoutGpusPerTaskEveryProcessSeesAllOfItsNodesGpus() {
    var a = entry(0, List.of("n1"), List.of(2), List.of(4, 5), null, null, null);
    assertThat(env(a, "n1", 1))
        .containsEntry("CUDA_VISIBLE_DEVICES", "4,5")
        .containsEntry("LOCAL_RANK", "1")
        .doesNotContainKey("SLURM_GPUS_PER_TASK");
  }

  @Test
  void unevenBlocksKeepRanksConsistent() {
    // 5 tasks on 2 nodes: 3 then 2 (Slurm's block distribution).
    var second = entry(1, List.of("n1", "n2"), List.of(3, 2), List.of(), null, null, null);
    assertThat(env(second, "n2", 0))
        .containsEntry("RANK", "3")
        .containsEntry("WORLD_SIZE", "5")
        .containsEntry("LOCAL_WORLD_SIZE", "2")
        .containsEntry("SLURM_TASKS_PER_NODE", "3,2");
  }

  @Test
  void aStepsTasksKnowTheirStepAndTheJobsAllocation() {
    // srun -w n3 -n 2 inside a job on n1..n4: the step runs on n3 only.
    var a =
        entry(0, List.of("n3"), List.of(2), List.of(0, 1), 1, 5, List.of("n1", "n2", "n3", "n4"));
    var env = env(a, "n3", 1);
    assertThat(env)
        .containsEntry("SLURM_STEP_ID", "5")
        .containsEntry("SLURM_STEPID", "5")
        .containsEntry("SLURM_STEP_NODELIST", "n3")
        .containsEntry("SLURM_STEP_NUM_NODES", "1")
        .containsEntry("SLURM_STEP_NUM_TASKS", "2")
        .containsEntry("SLURM_PROCID", "1")
        .containsEntry("SLURM_NODEID", "0")
        .containsEntry("SLURM_NTASKS", "2")
        .containsEntry("SLURM_JOB_NODELIST", "n[1-4]")
        .containsEntry("SLURM_JOB_NUM_NODES", "4")
        .containsEntry("CUDA_VISIBLE_DEVICES", "1");
  }

  @Test
  void everyTaskFindsKairosSrunFirstOnItsPathWithTheJobsCredential() {
    var a = entry(0, List.of("n1"), null, List.of(0), null, null, null);
    var env = env(a, "n1", 0);
    assertThat(env.get("PATH")).isEqualTo("/var/lib/kairos/bin:/usr/bin");
    assertThat(env)
        .containsEntry("KAIROS_SERVER", "https://10.0.0.1:8080")
        .containsEntry("KAIROS_CA", "/var/lib/kairos/bin/ca.pem")
        .containsEntry("KAIROS_JOB_TOKEN", "kstep-secret");
  }

  @Test
  void aJobCannotSetItsOwnCredentialOrServer() {
    var a =
        new TaskAssignment(
            42,
            1,
            0,
            1,
            List.of("n1"),
            "x",
            "alice",
            List.of("true"),
            Map.of("KAIROS_JOB_TOKEN", "forged", "KAIROS_SERVER", "http://evil"),
            null,
            List.of(),
            0,
            0,
            0,
            null,
            null,
            "TERM",
            30,
            null,
            0,
            null,
            false,
            0,
            null,
            null,
            null);
    var env = env(a, "n1", 0);
    assertThat(env).doesNotContainKey("KAIROS_JOB_TOKEN");
    assertThat(env).containsEntry("KAIROS_SERVER", "https://10.0.0.1:8080");
  }

  @Test
  void processesAndGpusThatDoNotFitAreRefusedNamingTheField() {
    var tooMany = entry(0, List.of("n1"), List.of(4), List.of(0, 1), 1, null, null);
    assertThatThrownBy(() -> env(tooMany, "n1", 0)).hasMessageContaining("gpusPerTask");
    var outside = entry(0, List.of("n1"), List.of(2), List.of(0, 1), 1, null, null);
    assertThatThrownBy(() -> env(outside, "n1", 2)).hasMessageContaining("outside");
    var wrongCounts = entry(0, List.of("n1"), List.of(2, 2), List.of(), null, null, null);
    assertThatThrownBy(() -> env(wrongCounts, "n1", 0)).hasMessageContaining("tasksPerNode");
  }
}

package io.kairos.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.protocol.agent.TaskAssignment;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A batch job's two kinds of task as the agent starts them. The batch step's variables are those
 * Slurm 22.05 gave a two-node batch job ({@code sbatch -N 2 --gres=gpu:2 --cpus-per-task=4}, under
 * ../shared/peers/slurm): SLURM_JOB_NODELIST=gpu[001-002], SLURM_TASKS_PER_NODE=1(x2),
 * SLURM_PROCID/LOCALID/NODEID=0, SLURM_GTIDS=0, ENVIRONMENT=BATCH, no SLURM_NTASKS.
 */
class BatchStepTest {
  private static final Path DATA = Path.of("/var/lib/kairos");

  static TaskAssignment task(int task, String script, Boolean holder, Map<String, String> env) {
    return new TaskAssignment(
        42,
        1,
        task,
        2,
        List.of("gpu001", "gpu002"),
        "train.sh",
        "alice",
        List.of("/home/alice/train.sh", "--lr", "0.1"),
        env,
        "/home/alice/run",
        List.of(0, 1),
        4,
        0,
        3600,
        "127.0.0.2",
        null,
        null,
        30,
        null,
        0,
        null,
        false,
        0,
        "/home/alice/run/slurm-%j.out",
        null,
        "alice",
        script,
        holder);
  }

  @Test
  void theBatchStepRunsTheScriptsCopyWithItsArgumentsAndABatchStepsVariables() {
    var a = task(0, "#!/bin/bash\necho hi\n", null, Map.of("FOO", "bar"));

    var spec = LaunchSpec.of(a, "gpu001", DATA, Map.of("PATH", "/usr/bin"));

    Path taskDir = DATA.resolve("tasks/42-1-0");
    assertThat(spec.argv())
        .containsExactly(taskDir.resolve("slurm_script").toString(), "--lr", "0.1");
    assertThat(spec.script()).isEqualTo("#!/bin/bash\necho hi\n");
    assertThat(spec.scriptFile()).isEqualTo(taskDir.resolve("slurm_script"));
    assertThat(spec.workdir()).isEqualTo(Path.of("/home/alice/run"));
    assertThat(spec.stdout()).isEqualTo(Path.of("/home/alice/run/slurm-42.out"));
    assertThat(spec.env())
        .containsAllEntriesOf(
            Map.ofEntries(
                Map.entry("SLURM_JOB_ID", "42"),
                Map.entry("SLURM_JOB_NAME", "train.sh"),
                Map.entry("SLURM_JOB_NODELIST", "gpu[001-002]"),
                Map.entry("SLURM_NODELIST", "gpu[001-002]"),
                Map.entry("SLURM_NNODES", "2"),
                Map.entry("SLURM_JOB_NUM_NODES", "2"),
                Map.entry("SLURM_TASKS_PER_NODE", "1(x2)"),
                Map.entry("SLURM_PROCID", "0"),
                Map.entry("SLURM_LOCALID", "0"),
                Map.entry("SLURM_NODEID", "0"),
                Map.entry("SLURM_GTIDS", "0"),
                Map.entry("SLURM_CPUS_PER_TASK", "4"),
                Map.entry("SLURM_CPUS_ON_NODE", "4"),
                Map.entry("SLURM_JOB_CPUS_PER_NODE", "4(x2)"),
                Map.entry("SLURM_GPUS_ON_NODE", "2"),
                Map.entry("SLURM_JOB_GPUS", "0,1"),
                Map.entry("SLURM_JOB_USER", "alice"),
                Map.entry("SLURM_SUBMIT_DIR", "/home/alice/run"),
                Map.entry("SLURMD_NODENAME", "gpu001"),
                Map.entry("ENVIRONMENT", "BATCH"),
                Map.entry("CUDA_VISIBLE_DEVICES", "0,1"),
                Map.entry("FOO", "bar"),
                Map.entry("PATH", "/usr/bin")));
    // A batch step is no rank of a gang: torch's variables and the task count are not set.
    assertThat(spec.env())
        .doesNotContainKeys(
            "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "NODE_RANK", "SLURM_NTASKS");
  }

  @Test
  void theJobsOwnRankVariablesStay() {
    var a = task(0, "#!/bin/sh\n", null, Map.of("WORLD_SIZE", "16"));

    assertThat(LaunchSpec.of(a, "gpu001", DATA, Map.of()).env()).containsEntry("WORLD_SIZE", "16");
  }

  @Test
  void aHolderRunsNothingOfTheJobAndWritesOnlyInItsTaskDirectory() {
    var a = task(1, null, true, Map.of());

    var spec = LaunchSpec.of(a, "gpu002", DATA, Map.of());

    Path taskDir = DATA.resolve("tasks/42-1-1");
    assertThat(spec.argv()).isEqualTo(BatchStep.HOLDER_ARGV);
    assertThat(spec.script()).isNull();
    assertThat(spec.workdir()).isEqualTo(taskDir);
    assertThat(spec.stdout()).isEqualTo(taskDir.resolve("stdout.log"));
    assertThat(spec.stderr()).isEqualTo(taskDir.resolve("stderr.log"));
  }

  @Test
  void tasksPerNodeIsWrittenAsSlurmWritesIt() {
    assertThat(BatchStep.tasksPerNode(new int[] {1})).isEqualTo("1");
    assertThat(BatchStep.tasksPerNode(new int[] {1, 1})).isEqualTo("1(x2)");
    assertThat(BatchStep.tasksPerNode(new int[] {2, 2, 1})).isEqualTo("2(x2),1");
    assertThat(BatchStep.tasksPerNode(new int[] {4, 8, 8})).isEqualTo("4,8(x2)");
  }
}

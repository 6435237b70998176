package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.protocol.JobState;
import io.kairos.protocol.JobSubmission;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kairos' srun and scontrol inside real jobs: a {@code kairos server} and two {@code kairos agent}s
 * (n1, n2; four emulated GPUs each), every part a process. A job's rank-0 process calls srun, which
 * starts a step across the job's allocation through the controller and the agents; each task prints
 * its rank variables (the probe), and the test checks them against what Slurm 22.05 starts for the
 * same srun line, and that srun's output, messages and exit code land in the job's output as
 * Slurm's would.
 */
class SrunIT {
  @TempDir static Path dir;
  static TestCluster cluster;

  /** What each task prints: the rank variables the scripts use. */
  static final String PROBE =
      "echo probe PROCID=$SLURM_PROCID LOCALID=$SLURM_LOCALID NODEID=$SLURM_NODEID"
          + " NTASKS=$SLURM_NTASKS RANK=$RANK LOCAL_RANK=$LOCAL_RANK WORLD_SIZE=$WORLD_SIZE"
          + " NODE=$SLURMD_NODENAME GPUS=$CUDA_VISIBLE_DEVICES STEP=$SLURM_STEP_ID";

  @BeforeAll
  static void start() throws Exception {
    cluster = TestCluster.start(dir);
    cluster.agent("n1", 2, "4xEMU");
    cluster.agent("n2", 3, "4xEMU");
  }

  @AfterAll
  static void stop() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  /**
   * A 2-node job of 2 GPUs per node whose rank 0 runs {@code script}; its output goes to a file.
   */
  static JobSubmission job(String script, Path out, Integer ntasksPerNode, Integer gpusPerTask) {
    String onRankZero = "if [ \"$SLURM_PROCID\" = 0 ]; then\n" + script + "\nfi\n";
    return new JobSubmission(
            "srun-it",
            List.of("/bin/bash", "-c", onRankZero),
            Map.of(),
            null,
            4,
            2,
            null,
            null,
            "5m",
            null,
            null,
            null,
            null,
            null,
            "5s",
            null,
            null,
            null,
            null,
            null,
            null,
            out.toString(),
            null,
            null,
            null)
        .withTasks(null, ntasksPerNode, gpusPerTask);
  }

  /** A job's output, with its nodes' names and GPUs put back as N0, N1, G0, G1 (by rank). */
  static String run(String script) throws Exception {
    var job = job(script, dir.resolve("out-" + System.nanoTime()), null, null);
    long id = cluster.submit(job);
    cluster.waitState(id, JobState.SUCCEEDED, Duration.ofSeconds(90));
    return generic(id, Files.readString(Path.of(job.output())));
  }

  /** {@code text} with job {@code id}'s node names as N0, N1 and GPU lists as G0, G1 (by node). */
  static String generic(long id, String text) {
    var placement = cluster.job(id).placement();
    for (int i = 0; i < placement.size(); i++) {
      var gpus = placement.get(i).gpus();
      text =
          text.replace("NODE=" + placement.get(i).node(), "NODE=N" + i)
              .replace(" " + placement.get(i).node() + ":", " N" + i + ":")
              .replace("on " + placement.get(i).node(), "on N" + i)
              .replace("only " + placement.get(i).node(), "only N" + i);
      text =
          text.replace(
              "N" + i + " GPUS=" + gpus.get(0) + "," + gpus.get(1), "N" + i + " GPUS=G" + i);
      text = text.replace("N" + i + " GPUS=" + gpus.get(0) + " ", "N" + i + " GPUS=G" + i + "a ");
      text = text.replace("N" + i + " GPUS=" + gpus.get(1) + " ", "N" + i + " GPUS=G" + i + "b ");
    }
    return text;
  }

  static List<String> probes(String output) {
    var out = new ArrayList<String>();
    for (String line : output.split("\n")) {
      int at = line.indexOf("probe ");
      if (at >= 0) {
        out.add(line.substring(at + "probe ".length()));
      }
    }
    out.sort(null);
    return out;
  }

  @Test
  void srunStartsOneTaskPerNodeAcrossTheAllocationByDefault() throws Exception {
    String output = run("srun bash -c '" + PROBE + "'\necho srun-exit=$?");
    assertThat(probes(output))
        .containsExactly(
            "PROCID=0 LOCALID=0 NODEID=0 NTASKS=2 RANK=0 LOCAL_RANK=0 WORLD_SIZE=2 NODE=N0"
                + " GPUS=G0 STEP=0",
            "PROCID=1 LOCALID=0 NODEID=1 NTASKS=2 RANK=1 LOCAL_RANK=0 WORLD_SIZE=2 NODE=N1"
                + " GPUS=G1 STEP=0");
    assertThat(output).contains("srun-exit=0");
  }

  @Test
  void tasksPerNodeAndGpusPerTaskGiveEachProcessItsRankAndGpu() throws Exception {
    String output =
        run(
            "srun -n 4 --ntasks-per-node=2 --gpus-per-task=1 bash -c '"
                + PROBE
                + "'\n"
                + "echo srun-exit=$?");
    assertThat(probes(output))
        .containsExactly(
            "PROCID=0 LOCALID=0 NODEID=0 NTASKS=4 RANK=0 LOCAL_RANK=0 WORLD_SIZE=4 NODE=N0 GPUS=G0a"
                + " STEP=0",
            "PROCID=1 LOCALID=1 NODEID=0 NTASKS=4 RANK=1 LOCAL_RANK=1 WORLD_SIZE=4 NODE=N0 GPUS=G0b"
                + " STEP=0",
            "PROCID=2 LOCALID=0 NODEID=1 NTASKS=4 RANK=2 LOCAL_RANK=0 WORLD_SIZE=4 NODE=N1 GPUS=G1a"
                + " STEP=0",
            "PROCID=3 LOCALID=1 NODEID=1 NTASKS=4 RANK=3 LOCAL_RANK=1 WORLD_SIZE=4 NODE=N1 GPUS=G1b"
                + " STEP=0");
  }

  @Test
  void aJobWithTasksPerNodeStartsThemWithoutSrun() throws Exception {
    Path out = dir.resolve("tpn");
    Files.createDirectories(out);
    var job =
        new JobSubmission(
                "tpn",
                List.of("/bin/bash", "-c", PROBE + " > " + out + "/rank-$SLURM_PROCID"),
                Map.of(),
                null,
                4,
                2,
                null,
                null,
                "5m",
                null,
                null,
                null,
                null,
                null,
                "5s",
                null,
                null,
                null,
                null)
            .withTasks(null, 2, 1);
    long id = cluster.submit(job);
    cluster.waitState(id, JobState.SUCCEEDED, Duration.ofSeconds(90));
    var lines = new ArrayList<String>();
    for (int rank = 0; rank < 4; rank++) {
      lines.addAll(probes(generic(id, Files.readString(out.resolve("rank-" + rank)))));
    }
    assertThat(lines)
        .containsExactly(
            "PROCID=0 LOCALID=0 NODEID=0 NTASKS=4 RANK=0 LOCAL_RANK=0 WORLD_SIZE=4 NODE=N0 GPUS=G0a"
                + " STEP=",
            "PROCID=1 LOCALID=1 NODEID=0 NTASKS=4 RANK=1 LOCAL_RANK=1 WORLD_SIZE=4 NODE=N0 GPUS=G0b"
                + " STEP=",
            "PROCID=2 LOCALID=0 NODEID=1 NTASKS=4 RANK=2 LOCAL_RANK=0 WORLD_SIZE=4 NODE=N1 GPUS=G1a"
                + " STEP=",
            "PROCID=3 LOCALID=1 NODEID=1 NTASKS=4 RANK=3 LOCAL_RANK=1 WORLD_SIZE=4 NODE=N1 GPUS=G1b"
                + " STEP=");
  }

  @Test
  void srunFormsTheScriptsUse() throws Exception {
    String output =
        run(
            String.join(
                "\n",
                "nodes=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\")",
                "echo nodelist=$SLURM_JOB_NODELIST hosts=$(echo $nodes)",
                "head=$(echo \"$nodes\" | head -n 1)",
                "echo head-host=$(srun --nodes=1 --ntasks=1 -w \"$head\" hostname)",
                "srun -l -n 2 -N 1 bash -c 'echo on $SLURMD_NODENAME'",
                "srun -n1 -w $(echo \"$nodes\" | tail -n 1) bash -c 'echo only $SLURMD_NODENAME'",
                "srun -n 2 bash -c 'exit $((SLURM_PROCID + 3))'",
                "echo failed-exit=$?",
                "srun -n1 bash -c 'kill -9 $$'",
                "echo killed-exit=$?",
                "export MINE=yes; srun -n1 bash -c 'echo export MINE=$MINE'",
                "srun -n1 no-such-program",
                "echo missing-exit=$?"));
    assertThat(output).containsAnyOf("nodelist=n[1-2] hosts=n1 n2", "nodelist=n[2,1] hosts=n2 n1");
    assertThat(output).contains("head-host=");
    assertThat(output).contains("0: on N0", "1: on N0");
    assertThat(output).contains("only N1").doesNotContain("only N0");
    assertThat(output)
        .contains("srun: error: N0: task 0: Exited with exit code 3")
        .contains("srun: error: N1: task 1: Exited with exit code 4")
        .contains("failed-exit=4");
    assertThat(output).contains("srun: error: N0: task 0: Killed", "killed-exit=137");
    // -n1 inside a 2-node job (SLURM_NNODES=2): Slurm's warning, as its srun prints it.
    assertThat(output)
        .contains("srun: Warning: can't run 1 processes on 2 nodes, setting nnodes to 1");
    assertThat(output).contains("export MINE=yes");
    assertThat(output)
        .contains("execve(): no-such-program: No such file or directory")
        .contains("missing-exit=2");
  }

  @Test
  void srunKilledStopsItsStepsTasks() throws Exception {
    Path marker = dir.resolve("signal-marker");
    String output =
        run(
            String.join(
                "\n",
                "srun -n1 bash -c 'sleep 30; touch " + marker + "' &",
                "pid=$!",
                "sleep 3",
                "kill -TERM $pid",
                "wait $pid",
                "echo srun-killed-exit=$?",
                "sleep 1",
                "srun -n1 true && echo next-step-ran"));
    assertThat(output).contains("srun: forcing job termination", "srun-killed-exit=137");
    assertThat(output).contains("next-step-ran");
    Thread.sleep(1_000);
    assertThat(marker).doesNotExist();
  }

  @Test
  void cancellingTheJobStopsItsSteps() throws Exception {
    Path marker = dir.resolve("cancel-marker");
    var job =
        job("srun bash -c 'sleep 60; touch " + marker + "'", dir.resolve("out-cancel"), null, null);
    long id = cluster.submit(job);
    cluster.waitState(id, JobState.RUNNING, Duration.ofSeconds(60));
    long deadline = System.nanoTime() + 60_000_000_000L;
    while (!cluster.get("/api/v1/jobs/" + id + "/steps").contains("\"RUNNING\"")) {
      assertThat(System.nanoTime()).as("the step starts").isLessThan(deadline);
      Thread.sleep(200);
    }
    cluster.post("/api/v1/jobs/" + id + "/cancel", "{}");
    cluster.waitState(id, JobState.CANCELLED, Duration.ofSeconds(60));
    long stepEnd = System.nanoTime() + 30_000_000_000L;
    String steps = cluster.get("/api/v1/jobs/" + id + "/steps");
    while (steps.contains("\"RUNNING\"") && System.nanoTime() < stepEnd) {
      Thread.sleep(200);
      steps = cluster.get("/api/v1/jobs/" + id + "/steps");
    }
    assertThat(steps).contains("\"CANCELLED\"").contains("the job ended");
    Thread.sleep(1_000);
    assertThat(marker).doesNotExist();
  }

  /** srun and scontrol start fast: a batch script calls them often. The figures go to the log. */
  @Test
  void srunAndScontrolStartFast() throws Exception {
    String output =
        run(
            String.join(
                "\n",
                "for i in 1 2 3 4 5; do",
                "  s=$(date +%s%N); srun -n1 true; e=$(date +%s%N)",
                "  echo srun-ms=$(( (e - s) / 1000000 ))",
                "  s=$(date +%s%N); scontrol show hostnames n[1-4] > /dev/null; e=$(date +%s%N)",
                "  echo scontrol-ms=$(( (e - s) / 1000000 ))",
                "done"));
    var srun = new ArrayList<Long>();
    var scontrol = new ArrayList<Long>();
    for (String line : output.split("\n")) {
      if (line.startsWith("srun-ms=")) {
        srun.add(Long.parseLong(line.substring(8).strip()));
      } else if (line.startsWith("scontrol-ms=")) {
        scontrol.add(Long.parseLong(line.substring(12).strip()));
      }
    }
    System.out.println("srun -n1 true, ms: " + srun + "; scontrol show hostnames, ms: " + scontrol);
    assertThat(srun).hasSize(5);
    assertThat(scontrol).hasSize(5);
    assertThat(srun.stream().sorted().toList().get(2)).as("median srun ms").isLessThan(5_000L);
    assertThat(scontrol.stream().sorted().toList().get(2))
        .as("median scontrol ms")
        .isLessThan(2_000L);
  }
}

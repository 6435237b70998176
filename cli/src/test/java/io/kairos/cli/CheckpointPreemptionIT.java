package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.kairos.protocol.CheckpointSpec;
import io.kairos.protocol.JobState;
import io.kairos.protocol.JobSubmission;
import io.kairos.protocol.JobView;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Preemption by checkpoint end to end, every part a real process: {@code kairos server} with a
 * tenancy whose queue lets a higher priority preempt, one {@code kairos agent}, and the example
 * training script ({@code docs/examples/train_checkpointed.py}, Debian's {@code /usr/bin/python3},
 * torch when installed) with the Python helper. The script never checkpoints on its own ({@code
 * every: 0}): the only checkpoint is the one the preemption asks for, so the next attempt resumes
 * from the step the job had reached when it was preempted, and its step counter never goes back
 * past it.
 *
 * <p>With {@code -Dkairos.checkpointTrials=N} it repeats the preemption N times and prints the time
 * from the preemptor's submission to the victim stopped after its checkpoint (p50, p95) and the
 * save's own time, for docs/performance.md. It asserts behaviour only, never times.
 */
class CheckpointPreemptionIT {
  @TempDir Path dir;

  static final String TENANCY =
      """
      scheduling: {protection: {minRuntime: 1s}}
      queues:
        - name: train
          quotas:
            gpu:H100: {nominal: 1}
          preemption: {withinQueue: LOWER_PRIORITY}
      """;

  static final Path PYTHON = Path.of("/usr/bin/python3");
  static final Path SCRIPT =
      Path.of("..", "docs", "examples", "train_checkpointed.py").toAbsolutePath().normalize();
  static final Pattern AFTER = Pattern.compile("after checkpoint at step (\\d+)");

  static JobSubmission job(String name, List<String> command, int priority) {
    return new JobSubmission(
        name, command, null, null, 1, null, null, null, "10m", "train", priority, null, null);
  }

  JobSubmission trainer(Path progress) {
    return job(
            "trainer",
            List.of(
                PYTHON.toString(),
                SCRIPT.toString(),
                "--steps",
                "1000000",
                "--step-time",
                "0.02",
                "--progress",
                progress.toString()),
            0)
        .withCheckpoint(new CheckpointSpec("USR1", "60s", "0", 2));
  }

  @Test
  void aPreemptedJobResumesFromTheCheckpointWrittenAtPreemption() throws Exception {
    assumeThat(Files.isExecutable(PYTHON)).as("Debian's python3").isTrue();
    Path tenancy = dir.resolve("tenancy.yaml");
    Files.writeString(tenancy, TENANCY);
    int trials = Integer.getInteger("kairos.checkpointTrials", 1);
    var toStopMs = new ArrayList<Long>();
    var lostSteps = new ArrayList<Long>();
    var askedToStopMs = new ArrayList<Long>();
    try (var cluster = TestCluster.start(dir, "--tenancy", tenancy.toString())) {
      // A name of its own: agents of one name share a cgroup tree, and an agent starting clears
      // its tree's stale cgroups, so another test's agent "n1" on this machine would kill ours.
      cluster.agent("ckpt-n1", 2, "1xH100");
      for (int trial = 0; trial < trials; trial++) {
        Path progress = dir.resolve("progress-" + trial + ".txt");
        long victim = cluster.submit(trainer(progress));
        TestCluster.waitFor(
            "the trainer has made 10 steps",
            Duration.ofSeconds(90),
            () -> lastStep(TestCluster.readQuietly(progress), "1") >= 10,
            () -> TestCluster.readQuietly(progress) + "\n" + cluster.agentLog("ckpt-n1"));

        long t0 = System.nanoTime();
        long preemptor = cluster.submit(job("urgent", List.of("sleep", "0.2"), 10));
        TestCluster.waitFor(
            "the trainer is preempted after its checkpoint",
            Duration.ofSeconds(90),
            () -> cluster.job(victim).state() == JobState.PENDING,
            () -> cluster.job(victim) + "\n" + cluster.serverLog());
        toStopMs.add((System.nanoTime() - t0) / 1_000_000);
        long stoppedAtMs = System.currentTimeMillis();
        JobView stopped = cluster.job(victim);
        assertThat(stopped.message())
            .as("what happened, in the job's message")
            .startsWith("preempted by job " + preemptor)
            .containsPattern(AFTER);
        Matcher m = AFTER.matcher(stopped.message());
        assertThat(m.find()).isTrue();
        long saved = Long.parseLong(m.group(1));
        String first = TestCluster.readQuietly(progress);
        // (Its own "saved" line may be missing: the stop can come before the helper returns.)
        assertThat(lastStep(first, "1"))
            .as("it reached the checkpoint")
            .isGreaterThanOrEqualTo(saved);
        lostSteps.add(lastStep(first, "1") - saved);
        Matcher asked = Pattern.compile("attempt 1 asked at ([0-9.]+)").matcher(first);
        assertThat(asked.find()).as("the job was asked for its checkpoint").isTrue();
        askedToStopMs.add(stoppedAtMs - Math.round(Double.parseDouble(asked.group(1)) * 1000));
        assertThat(stopped.lastCheckpoint().step()).isEqualTo(saved);

        if (trial > 0) {
          cluster.post("/api/v1/jobs/" + victim + "/cancel", "{}");
          cluster.waitState(preemptor, JobState.SUCCEEDED, Duration.ofSeconds(60));
          continue;
        }
        // The preemptor runs; then the trainer's second attempt restores the checkpoint.
        cluster.waitState(preemptor, JobState.SUCCEEDED, Duration.ofSeconds(60));
        TestCluster.waitFor(
            "the second attempt makes steps",
            Duration.ofSeconds(90),
            () -> lastStep(TestCluster.readQuietly(progress), "2") >= saved + 5,
            () -> TestCluster.readQuietly(progress) + "\n" + cluster.serverLog());
        String all = TestCluster.readQuietly(progress);
        assertThat(all).contains("attempt 2 restored " + saved + " ");
        List<Long> second = steps(all, "2");
        assertThat(second.getFirst())
            .as("the step counter goes on from the checkpoint at preemption")
            .isEqualTo(saved + 1);
        assertThat(second).isSorted().allMatch(s -> s > saved);
        assertThat(cluster.job(victim).attempt()).isEqualTo(2);

        String listed = TenancyIT.cli(cluster, "checkpoints", Long.toString(victim));
        assertThat(listed).contains("checkpoint on SIGUSR1 (timeout 60s)");
        assertThat(listed).containsPattern("(?m)^" + saved + "\\s+1\\s");
        String show = TenancyIT.cli(cluster, "show", Long.toString(victim));
        assertThat(show).contains("last checkpoint").contains("step " + saved);
        cluster.post("/api/v1/jobs/" + victim + "/cancel", "{}");
        cluster.waitState(victim, JobState.CANCELLED, Duration.ofSeconds(60));
      }
    }
    if (trials > 1) {
      var stop = Percentiles.of(toStopMs.stream().mapToLong(Long::longValue).toArray());
      var lost = Percentiles.of(lostSteps.stream().mapToLong(Long::longValue).toArray());
      var asked = Percentiles.of(askedToStopMs.stream().mapToLong(Long::longValue).toArray());
      System.out.printf(
          "preempt-by-checkpoint over %d trials: preemptor submitted -> victim stopped after its"
              + " checkpoint p50 %d ms p95 %d ms (min %d, max %d); steps made after the"
              + " checkpoint (lost) p50 %d p95 %d max %d; signal seen by the job -> victim"
              + " stopped (seen by a 50 ms poll) p50 %d ms p95 %d ms%n",
          trials,
          stop.value(50),
          stop.value(95),
          stop.min(),
          stop.max(),
          lost.value(50),
          lost.value(95),
          lost.max(),
          asked.value(50),
          asked.value(95));
    }
  }

  static long lastStep(String progress, String attempt) {
    List<Long> s = steps(progress, attempt);
    return s.isEmpty() ? -1 : s.getLast();
  }

  static List<Long> steps(String progress, String attempt) {
    var out = new ArrayList<Long>();
    String prefix = "attempt " + attempt + " step ";
    for (String line : progress.lines().toList()) {
      if (line.startsWith(prefix)) {
        out.add(Long.parseLong(line.substring(prefix.length()).split(" ")[0]));
      }
    }
    return out;
  }
}

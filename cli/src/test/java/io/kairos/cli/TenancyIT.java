package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.type.TypeReference;
import io.kairos.protocol.JobState;
import io.kairos.protocol.JobSubmission;
import io.kairos.protocol.JobView;
import io.kairos.protocol.QueueView;
import java.io.ByteArrayOutputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Multi-tenant scheduling end to end, with a real controller ({@code kairos server --tenancy}) and
 * a real agent as processes: two queues of one cohort, each entitled to half of the 4 GPUs, the
 * second allowed to reclaim. A long job of queue a borrows all 4; a job of queue b takes its quota
 * back: the borrower receives SIGTERM, is requeued (PENDING, the preemption in its history), b's
 * job runs, and the borrower runs again after it.
 */
class TenancyIT {
  @TempDir Path dir;

  static final String TENANCY =
      """
      # A short protection, so the test does not wait out the default 30 s.
      scheduling: {protection: {minRuntime: 3s}}
      cohorts: [lab]
      queues:
        - name: a
          cohort: lab
          quotas:
            gpu:H100: {nominal: 2}
        - name: b
          cohort: lab
          quotas:
            gpu:H100: {nominal: 2}
          preemption: {reclaimWithinCohort: ANY}
      """;

  static JobSubmission job(String queue, int gpus, String name, String script) {
    return new JobSubmission(
        name,
        List.of("/bin/sh", "-c", script),
        null,
        null,
        gpus,
        null,
        null,
        null,
        "10m",
        queue,
        null,
        null,
        null,
        null,
        "10s",
        null,
        null,
        null,
        null,
        null,
        null,
        null,
        null,
        null,
        null);
  }

  @Test
  void aQueueReclaimsItsQuotaFromABorrowerThatIsRequeuedAndRunsAgainLater() throws Exception {
    Path file = dir.resolve("tenancy.yaml");
    Files.writeString(file, TENANCY);
    Path marks = dir.resolve("borrower.marks");
    try (var cluster = TestCluster.start(dir, "--tenancy", file.toString())) {
      cluster.agent("n1", 1, "4xH100");

      // 1. The borrower: all 4 GPUs from queue a (nominal 2, borrows 2). It notes each start
      //    and the SIGTERM it gets, and otherwise runs until stopped.
      long borrower =
          cluster.submit(
              job(
                  "a",
                  4,
                  "borrower",
                  "trap 'echo TERM >> "
                      + marks
                      + "; exit 143' TERM; echo start >> "
                      + marks
                      + "; while true; do sleep 0.2; done"));
      cluster.waitState(borrower, JobState.RUNNING, Duration.ofSeconds(30));
      var queues = queues(cluster);
      assertThat(queues.getFirst().name()).isEqualTo("a");
      assertThat(queues.getFirst().quotas())
          .singleElement()
          .satisfies(
              q -> {
                assertThat(q.usage()).isEqualTo(4);
                assertThat(q.borrowed()).isEqualTo(2);
              });

      // 2. Queue b's job wants its nominal 2 back. The borrower is protected for its first 3 s
      //    of running (anti-thrashing; the file's minRuntime), then preempted: SIGTERM, and
      //    PENDING again.
      long claimer = cluster.submit(job("b", 2, "claimer", "sleep 5"));
      assertThat(cluster.job(claimer).state()).isEqualTo(JobState.PENDING);
      TestCluster.waitFor(
          "the borrower is requeued by a preemption",
          Duration.ofSeconds(90),
          () -> {
            var v = cluster.job(borrower);
            return v.state() == JobState.PENDING && v.preemptedAt() != null;
          },
          () ->
              "borrower: "
                  + cluster.job(borrower)
                  + "\nclaimer: "
                  + cluster.job(claimer)
                  + "\nserver log:\n"
                  + cluster.serverLog());
      JobView requeued = cluster.job(borrower);
      assertThat(requeued.preemptedAt()).hasSize(1);
      assertThat(requeued.preemptedBy()).isEqualTo(claimer);
      assertThat(requeued.message()).startsWith("preempted by job " + claimer);
      assertThat(requeued.requeues()).isEqualTo(1);
      assertThat(Files.readString(marks)).as("the borrower got SIGTERM").contains("TERM");

      // 3. The claimer runs and ends; the borrower then runs again, a second attempt.
      TestCluster.waitFor(
          "the claimer succeeds",
          Duration.ofSeconds(60),
          () -> cluster.job(claimer).state() == JobState.SUCCEEDED,
          () -> "claimer: " + cluster.job(claimer) + "\nserver log:\n" + cluster.serverLog());
      assertThat(cluster.job(claimer).attempt()).isEqualTo(1);
      cluster.waitState(borrower, JobState.RUNNING, Duration.ofSeconds(30));
      assertThat(cluster.job(borrower).attempt()).isEqualTo(2);
      TestCluster.waitFor(
          "the borrower's second start",
          Duration.ofSeconds(10),
          () -> TestCluster.readQuietly(marks).lines().filter("start"::equals).count() == 2,
          () -> TestCluster.readQuietly(marks));

      // 4. What a user sees: kairos show and kairos queues.
      String show = cli(cluster, "show", Long.toString(borrower));
      assertThat(show).contains("preempted").contains("by job " + claimer);
      String queuesText = cli(cluster, "queues");
      assertThat(queuesText).contains("gpu:H100 4/2 +2 borrowed");
    }
  }

  static List<QueueView> queues(TestCluster cluster) throws Exception {
    return TestCluster.JSON.readValue(
        cluster.get("/api/v1/queues"), new TypeReference<List<QueueView>>() {});
  }

  static String cli(TestCluster cluster, String... args) {
    var out = new ByteArrayOutputStream();
    var err = new ByteArrayOutputStream();
    var all = new java.util.ArrayList<String>(List.of(args));
    all.addAll(List.of("--server", cluster.url, "--token", cluster.adminToken));
    int code;
    try (var o = new PrintWriter(out, true, StandardCharsets.UTF_8);
        var e = new PrintWriter(err, true, StandardCharsets.UTF_8)) {
      code = Main.run(o, e, all.toArray(String[]::new));
    }
    assertThat(code).as("kairos %s: %s", String.join(" ", args), err).isZero();
    return out.toString(StandardCharsets.UTF_8);
  }
}

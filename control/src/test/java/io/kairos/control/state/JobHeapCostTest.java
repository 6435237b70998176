package io.kairos.control.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.json.JsonMapper;
import io.kairos.control.api.Submissions;
import io.kairos.control.auth.Principal;
import io.kairos.control.raft.CommandCodec;
import io.kairos.protocol.JobSubmission;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import org.junit.jupiter.api.Test;

/**
 * Measures what a job costs the controller's heap, live and ended, and checks it against the
 * assumption {@link Limits#forHeap} sizes the defaults with ({@link Limits#HEAP_BYTES_PER_WEIGHT}
 * per unit of {@link JobSize#weight}). Fills a {@link ControlState} through the API's own parsing
 * and validation, measures the heap after full collections, ends the jobs, measures again, then
 * restores them from a snapshot and measures once more. Off by default (it needs a quiet heap):
 *
 * <pre>
 *   ./mvnw -o -q -pl control -am test -Dtest=JobHeapCostTest -Dkairos.measure=true \
 *       -Dsurefire.failIfNoSpecifiedTests=false
 * </pre>
 */
class JobHeapCostTest {
  static final String SMALL =
      "{\"name\":\"train-%d\",\"command\":[\"python\",\"train.py\",\"--lr\",\"0.001\",\"--epochs\","
          + "\"%d\"],\"env\":{\"HF_TOKEN\":\"hf_abcdefghijklmnopqrstuvwxyz%d\",\"WANDB_PROJECT\":"
          + "\"llm\"},\"gpus\":1}";

  static long usedAfterGc() {
    for (int i = 0; i < 4; i++) {
      System.gc();
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  record Cost(long weight, long liveBytes, long endedBytes, long restoredBytes) {}

  static Cost measure(String template, int jobs) throws Exception {
    var json = JsonMapper.builder().build();
    var who = new Principal("alice", TokenRecord.USER);
    var state = new ControlState();
    state.apply(StateFixtures.register("n1", 8));
    long weight = 0;
    long before = usedAfterGc();
    long t = StateFixtures.T0;
    for (int i = 0; i < jobs; i += 1000) {
      var requests = new ArrayList<JobRequest>();
      for (int k = i; k < Math.min(jobs, i + 1000); k++) {
        var s = json.readValue(String.format(template, k, k, k), JobSubmission.class);
        requests.add(Submissions.validate(s, who));
      }
      weight = JobSize.weight(requests.getFirst());
      state.apply(new ControlCommand.SubmitJobs(t++, requests));
    }
    long live = (usedAfterGc() - before) / jobs;
    for (long id = 1; id <= jobs; id++) {
      state.apply(new ControlCommand.CancelJob(t++, id, "alice"));
    }
    long ended = (usedAfterGc() - before) / jobs;
    var file = java.nio.file.Files.createTempFile("kairos-heap-cost", ".snapshot");
    try (var out = java.nio.file.Files.newOutputStream(file)) {
      CommandCodec.writeImage(state.image(), out);
    }
    state = null;
    long empty = usedAfterGc();
    ControlState restored;
    try (var in = new java.io.BufferedInputStream(java.nio.file.Files.newInputStream(file))) {
      restored = ControlState.of(CommandCodec.readImage(in));
    }
    long restoredBytes = (usedAfterGc() - empty) / jobs;
    java.nio.file.Files.delete(file);
    assertThat(restored.jobCount()).isEqualTo(jobs);
    return new Cost(weight, live, ended, restoredBytes);
  }

  @Test
  void aJobCostsLessThanTheDefaultsAssume() throws Exception {
    assumeTrue(Boolean.getBoolean("kairos.measure"), "a measurement: -Dkairos.measure=true");
    String big = SMALL.replace("\"llm\"}", "\"llm\",\"BLOB\":\"" + "x".repeat(16 * 1024) + "\"}");
    for (var c : new Cost[] {measure(SMALL, 50_000), measure(big, 5_000)}) {
      System.out.printf(
          "job heap cost: weight %d: live %d bytes, ended %d bytes, restored from a snapshot %d"
              + " bytes; the defaults assume %d%n",
          c.weight(),
          c.liveBytes(),
          c.endedBytes(),
          c.restoredBytes(),
          c.weight() * Limits.HEAP_BYTES_PER_WEIGHT);
      assertThat(Math.max(c.liveBytes(), Math.max(c.endedBytes(), c.restoredBytes())))
          .isLessThanOrEqualTo(c.weight() * Limits.HEAP_BYTES_PER_WEIGHT);
    }
  }
}

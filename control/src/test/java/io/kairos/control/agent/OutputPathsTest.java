package io.kairos.control.agent;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kairos.control.api.Submissions;
import io.kairos.control.auth.Principal;
import io.kairos.control.state.JobRecord;
import io.kairos.control.state.JobRequest;
import io.kairos.protocol.JobSubmission;
import io.kairos.protocol.TaskPlacement;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A job's output and error paths: validated, kept in the request, handed to every task. */
class OutputPathsTest {
  private static final Principal ALICE = new Principal("alice", "user");

  private static JobSubmission withOutput(String output, String error) {
    return new JobSubmission(
        null,
        List.of("train.sh"),
        null,
        null,
        16,
        8,
        null,
        null,
        null,
        null,
        null,
        null,
        null,
        null,
        null,
        null,
        null,
        null,
        null,
        null,
        null,
        output,
        error);
  }

  @Test
  void everySlurmPatternIsAcceptedAndReachesEachTask() {
    JobRequest r =
        Submissions.validate(
            withOutput("/logs/%x-%j_%A_%a.%t.%N.%u.100%%.out", "/logs/%j.err"), ALICE);
    assertThat(r.output()).isEqualTo("/logs/%x-%j_%A_%a.%t.%N.%u.100%%.out");
    assertThat(r.error()).isEqualTo("/logs/%j.err");

    var job = new JobRecord();
    job.id = 7;
    job.request = r;
    job.attempt = 1;
    job.placement =
        List.of(new TaskPlacement(0, "n1", List.of(0)), new TaskPlacement(1, "n2", List.of(0)));
    var a = Reconciler.assignment(job, job.placement.get(1), "10.0.0.1", null);

    assertThat(a.output()).isEqualTo(r.output());
    assertThat(a.error()).isEqualTo("/logs/%j.err");
  }

  @Test
  void withoutPathsTheTaskGetsNone() {
    JobRequest r = Submissions.validate(withOutput(null, ""), ALICE);
    assertThat(r.output()).isEmpty();
    assertThat(r.error()).isEmpty();

    var job = new JobRecord();
    job.id = 8;
    job.request = r;
    job.attempt = 1;
    job.placement = List.of(new TaskPlacement(0, "n1", List.of(0)));
    var a = Reconciler.assignment(job, job.placement.get(0), null, null);

    assertThat(a.output()).isNull();
    assertThat(a.error()).isNull();
  }

  @Test
  void aLogEntryWrittenBeforeTheFieldsExistedReadsAsNone() throws Exception {
    String old =
        """
        {"name":"j","command":["x"],"env":{},"workdir":"","gpus":0,"gpusPerNode":0,"cpus":1,
         "memoryMb":0,"timeLimitSec":60,"queue":"default","priority":0,"gpuModel":"",
         "user":"alice","killSignal":"TERM","graceSec":30,"warnSignal":null,"warnBeforeSec":0,
         "checkpointDir":"","maxRestarts":0,"excludeNodes":[]}""";
    JobRequest r = new ObjectMapper().readValue(old, JobRequest.class);
    assertThat(r.output()).isEmpty();
    assertThat(r.error()).isEmpty();
  }
}

package io.kairos.control.state;

import io.kairos.core.model.JobId;
import io.kairos.core.tenancy.PreemptionBook;
import io.kairos.protocol.JobState;
import java.util.Objects;
import java.util.function.LongFunction;

/**
 * The controller's job records as the core's preemption rules ({@link PreemptionBook}) ask about
 * them: the state machine when it applies a preemption, the scheduler loop before each pass.
 *
 * @param byId the record of a job id, or null when there is none
 */
public record RecordedJobs(LongFunction<JobRecord> byId) implements PreemptionBook.Jobs {
  public RecordedJobs {
    Objects.requireNonNull(byId, "byId");
  }

  /** RUNNING, and neither requeueing (a preemption's or a failure's stop) nor releasing. */
  @Override
  public boolean running(JobId job) {
    JobRecord r = byId.apply(job.value());
    return r != null && r.state == JobState.RUNNING && !r.requeueing && !r.releasing;
  }

  /** {@link JobRecord#isBeingPreempted()}. */
  @Override
  public boolean stopping(JobId job) {
    JobRecord r = byId.apply(job.value());
    return r != null && r.isBeingPreempted();
  }

  /** PENDING (held at a gate or queued). */
  @Override
  public boolean waiting(JobId job) {
    JobRecord r = byId.apply(job.value());
    return r != null && r.state == JobState.PENDING;
  }
}

package io.kairos.core.model;

import io.kairos.core.Checks;
import java.util.Objects;

/** A submitted job: its identity, what it asked for, and when it arrived. */
public record Job(JobId id, JobSpec spec, long submitSec) {
  public Job {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(spec, "spec");
    Checks.nonNegative(submitSec, "submitSec");
  }

  public int totalGpus() {
    return spec.gang().totalGpus();
  }

  public long timeLimitSec() {
    return spec.timeLimitSec();
  }
}

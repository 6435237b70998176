package io.kairos.core.model;

import io.kairos.core.Checks;

/** A job's identity; dense and increasing in submission order. */
public record JobId(long value) implements Comparable<JobId> {
  public JobId {
    Checks.positive(value, "jobId");
  }

  public static JobId of(long value) {
    return new JobId(value);
  }

  @Override
  public int compareTo(JobId other) {
    return Long.compare(value, other.value);
  }

  @Override
  public String toString() {
    return Long.toString(value);
  }
}

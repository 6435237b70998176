package io.kairos.core.model;

import io.kairos.core.Checks;
import java.util.Objects;

/**
 * What a user asked for.
 *
 * @param user who submitted it
 * @param queue the queue it was submitted to
 * @param priority higher runs first; 0 is the default
 * @param gang the tasks, placed all-or-nothing
 * @param timeLimitSec the runtime estimate; the job is stopped when it runs this long, and
 *     reservations assume it runs exactly this long
 * @param gpuModel the GPU model every task needs, or empty for any
 */
public record JobSpec(
    String user, String queue, int priority, GangSpec gang, long timeLimitSec, String gpuModel) {
  public JobSpec {
    Objects.requireNonNull(user, "user");
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(gang, "gang");
    Objects.requireNonNull(gpuModel, "gpuModel");
    Checks.positive(timeLimitSec, "timeLimitSec");
  }

  public static JobSpec of(GangSpec gang, long timeLimitSec) {
    return new JobSpec("nobody", "default", 0, gang, timeLimitSec, "");
  }

  public int totalGpus() {
    return gang.totalGpus();
  }
}

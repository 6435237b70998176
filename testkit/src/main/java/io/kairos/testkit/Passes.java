package io.kairos.testkit;

import io.kairos.core.model.JobId;
import io.kairos.core.sched.Decision;
import io.kairos.core.sched.PassResult;
import io.kairos.core.sched.Reason;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** Read helpers over a {@link PassResult}, by job id. */
public final class Passes {
  private Passes() {}

  /** Ids of the jobs the pass starts, in decision order. */
  public static List<JobId> started(PassResult r) {
    return r.starts().stream().map(Decision.Start::job).toList();
  }

  /** Ids of the jobs the pass reserves, in decision order. */
  public static List<JobId> reserved(PassResult r) {
    return r.reservations().stream().map(Decision.Reserve::job).toList();
  }

  public static Optional<Decision.Start> start(PassResult r, JobId id) {
    return r.starts().stream().filter(s -> s.job().equals(id)).findFirst();
  }

  public static Optional<Decision.Reserve> reservation(PassResult r, JobId id) {
    return r.reservations().stream().filter(s -> s.job().equals(id)).findFirst();
  }

  /**
   * Why {@code id} waits after the pass; empty when it started. Fails when the job was not
   * considered by the pass at all.
   */
  public static Optional<Reason> reason(PassResult r, JobId id) {
    var d = r.diagnosis();
    for (int rank = 0; rank < d.size(); rank++) {
      if (d.job(rank).id().equals(id)) {
        return d.reason(rank);
      }
    }
    throw new AssertionError("job " + id + " is not in the pass's diagnosis");
  }

  /** The jobs in the order the pass considered them. */
  public static List<JobId> order(PassResult r) {
    var d = r.diagnosis();
    var ids = new ArrayList<JobId>(d.size());
    for (int rank = 0; rank < d.size(); rank++) {
      ids.add(d.job(rank).id());
    }
    return ids;
  }

  /** GPUs a placement holds, summed over its nodes. */
  public static int gpus(io.kairos.core.model.Placement p) {
    int sum = 0;
    for (int i = 0; i < p.nodeCount(); i++) {
      sum += Long.bitCount(p.gpuMask(i));
    }
    return sum;
  }
}

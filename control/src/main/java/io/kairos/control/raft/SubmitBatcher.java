package io.kairos.control.raft;

import io.kairos.control.state.ControlCommand;
import io.kairos.control.state.ControlCommand.SubmitJobs;
import io.kairos.control.state.ControlResult;
import io.kairos.control.state.JobRequest;
import java.io.Closeable;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Packs concurrent submissions into one {@link SubmitJobs} log entry ({@link GroupCommit}), so that
 * thousands of submits per second cost tens of log writes, not thousands.
 *
 * <p>Each caller's jobs are one group of the entry ({@link SubmitJobs#groups}): the state machine
 * admits or refuses them as a whole against the limits, and a refused caller's future fails with
 * {@link Refused}.
 */
public final class SubmitBatcher implements Closeable {
  static final int MAX_JOBS_PER_ENTRY = 2_000;

  /** A limit refused the submit as a whole: no job was made. */
  public static final class Refused extends Exception {
    private static final long serialVersionUID = 1L;
    private final transient ControlResult.Refusal refusal;

    Refused(ControlResult.Refusal refusal) {
      super(refusal.limit() + " " + refusal.value(), null, false, false);
      this.refusal = refusal;
    }

    public ControlResult.Refusal refusal() {
      return refusal;
    }
  }

  private final GroupCommit<List<JobRequest>, List<Long>> commits;

  public SubmitBatcher(RaftReplica replica, InstantSource clock) {
    this.commits =
        new GroupCommit<>("kairos-submit-batcher", replica, new Submits(clock), MAX_JOBS_PER_ENTRY);
  }

  /** Queues jobs for the next entry; completes with their ids, in order. */
  public CompletableFuture<List<Long>> submit(List<JobRequest> jobs) {
    return commits.add(List.copyOf(jobs));
  }

  @Override
  public void close() {
    commits.close();
  }

  /** One caller's jobs are one group; its ids, or the refusal of its group. */
  private record Submits(InstantSource clock)
      implements GroupCommit.Packing<List<JobRequest>, List<Long>> {
    @Override
    public int weight(List<JobRequest> jobs) {
      return jobs.size();
    }

    @Override
    public ControlCommand pack(List<List<JobRequest>> batch, int jobCount) {
      var all = new ArrayList<JobRequest>(jobCount);
      var groups = new ArrayList<Integer>(batch.size());
      for (List<JobRequest> jobs : batch) {
        all.addAll(jobs);
        groups.add(jobs.size());
      }
      return new SubmitJobs(clock.millis(), all, groups);
    }

    @Override
    public void unpack(
        List<List<JobRequest>> batch,
        ControlResult result,
        List<CompletableFuture<List<Long>>> done) {
      var refused = new HashMap<Integer, ControlResult.Refusal>();
      for (ControlResult.Refusal r : result.refused()) {
        refused.put(r.group(), r);
      }
      int at = 0;
      for (int g = 0; g < batch.size(); g++) {
        ControlResult.Refusal refusal = refused.get(g);
        if (refusal != null) {
          done.get(g).completeExceptionally(new Refused(refusal));
          continue;
        }
        int n = batch.get(g).stream().mapToInt(JobRequest::jobCount).sum();
        done.get(g).complete(List.copyOf(result.ids().subList(at, at + n)));
        at += n;
      }
    }
  }
}

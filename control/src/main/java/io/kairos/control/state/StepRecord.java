package io.kairos.control.state;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import io.kairos.protocol.StepView;
import io.kairos.protocol.TaskPlacement;
import io.kairos.protocol.slurm.StepExit;
import java.util.ArrayList;
import java.util.List;

/**
 * One job step (an srun inside the job) in the replicated state: where its tasks run inside the
 * job's allocation and how each ended. Mutable, written only by {@link JobSteps} on the apply
 * thread; fields are public for the snapshot codec.
 *
 * <p>A step has one placement entry per node, each starting {@code tasksPerNode} processes on the
 * agent; the agent reports an entry's end with each process's code, which fill {@link #taskExits}
 * by rank. The step has ended once every entry has.
 */
@JsonInclude(JsonInclude.Include.NON_DEFAULT)
public final class StepRecord {
  public int id;
  public int attempt;
  public StepRequest request;

  /** Per node of the step, in the job's order: (entry, node, the GPUs its tasks see). */
  public List<TaskPlacement> placement = List.of();

  public List<Integer> tasksPerNode = List.of();

  /** Per entry: null while it runs, else its code (Slurm's rule over its processes'). */
  public List<Integer> entryExits = new ArrayList<>();

  /** Per rank: null while it runs, else its exit code (128 + N for signal N, -1 when lost). */
  public List<Integer> taskExits = new ArrayList<>();

  /** What srun prints about the layout before the step starts. */
  public List<String> warnings = List.of();

  public long startMs;

  /** When the last entry ended; 0 while any runs. */
  public long endMs;

  /** Who cancelled it; null unless cancelled (srun was signalled, or a user asked). */
  public String cancelledBy;

  /** Its tasks get SIGKILL at once (srun was signalled), not the job's signal and grace. */
  public boolean killNow;

  /** Why it ended when that was not its tasks' doing; null otherwise. */
  public String message;

  public StepRecord() {}

  StepRecord(int id, int attempt, StepRequest request, long startMs) {
    this.id = id;
    this.attempt = attempt;
    this.request = request;
    this.startMs = startMs;
  }

  /** A copy that later changes to this record do not touch (for snapshots taken off-lock). */
  StepRecord copy() {
    var c = new StepRecord(id, attempt, request, startMs);
    c.placement = placement;
    c.tasksPerNode = tasksPerNode;
    c.entryExits = new ArrayList<>(entryExits);
    c.taskExits = new ArrayList<>(taskExits);
    c.warnings = warnings;
    c.endMs = endMs;
    c.cancelledBy = cancelledBy;
    c.killNow = killNow;
    c.message = message;
    return c;
  }

  /** Whether every entry has ended. */
  @JsonIgnore
  public boolean isEnded() {
    return endMs != 0;
  }

  /** Whether its tasks should run: not ended, not cancelled. */
  @JsonIgnore
  public boolean isLive() {
    return !isEnded() && cancelledBy == null;
  }

  /** The first rank of entry {@code entry}. */
  int firstRank(int entry) {
    int rank = 0;
    for (int i = 0; i < entry; i++) {
      rank += tasksPerNode.get(i);
    }
    return rank;
  }

  /** The step as the API shows it. */
  public StepView view(long jobId) {
    String state;
    Integer exit = null;
    if (!isEnded()) {
      state = StepView.RUNNING;
    } else {
      exit = StepExit.of(taskExits);
      state =
          cancelledBy != null || message != null
              ? StepView.CANCELLED
              : exit == 0 ? StepView.COMPLETED : StepView.FAILED;
    }
    var nodes = new ArrayList<String>(placement.size());
    for (TaskPlacement p : placement) {
      nodes.add(p.node());
    }
    int tasks = 0;
    for (int n : tasksPerNode) {
      tasks += n;
    }
    return new StepView(
        jobId,
        id,
        attempt,
        state,
        nodes,
        tasksPerNode,
        tasks,
        exit,
        new ArrayList<>(taskExits),
        warnings.isEmpty() ? null : warnings,
        message != null ? message : cancelledBy == null ? null : "cancelled by " + cancelledBy,
        startMs,
        isEnded() ? endMs : null);
  }
}

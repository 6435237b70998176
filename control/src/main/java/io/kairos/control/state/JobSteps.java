package io.kairos.control.state;

import io.kairos.control.state.ControlCommand.CancelStep;
import io.kairos.control.state.ControlCommand.StartStep;
import io.kairos.control.state.ControlCommand.TaskEnded;
import io.kairos.protocol.JobState;
import io.kairos.protocol.TaskPlacement;
import io.kairos.protocol.slurm.StepLayout;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.TreeMap;

/**
 * Job steps: the tasks an srun inside a running job starts in the job's allocation. A step is laid
 * out when its {@code StartStep} is applied (so every replica lays it out the same), by srun's
 * rules ({@link StepLayout}) over the job's nodes of the current attempt, spreading away from the
 * steps that run now; with {@code gpusPerTask} each task gets its own GPUs of the job's on its
 * node, the least used by running steps first. The reconciler launches each entry on its node; the
 * agent reports an entry's end like a task's ({@code TaskEnded} with a step), with each process's
 * code.
 *
 * <p>A step's failure is its srun's business, not the job's: it never fails or requeues the job.
 * When the job stops running (it ended, or a requeue began), its steps' tasks are stopped with it
 * and the job keeps its GPUs until they have ({@link JobRecord#allStopped}); a step still running
 * then ends CANCELLED with the reason. A lost node's entries end as lost ({@link
 * ControlState#LOST_EXIT_CODE}).
 *
 * <p>Bounded: at most {@link #MAX_LIVE} steps run at once per job, and the latest {@link
 * #ENDED_KEPT} ended ones are kept (less their command and environment), so a script that calls
 * srun in a loop does not grow the state.
 */
final class JobSteps {
  /** The most steps one job may run at once. */
  static final int MAX_LIVE = 256;

  /** How many ended steps a job keeps, for srun to read their end. */
  static final int ENDED_KEPT = 64;

  private final Records records;
  private final JobLifecycle lifecycle;

  JobSteps(Records records, JobLifecycle lifecycle) {
    this.records = records;
    this.lifecycle = lifecycle;
  }

  /** A step's layout in {@code job}'s allocation now, or why it has none. */
  record Laid(StepLayout layout, List<List<Integer>> gpus) {}

  /**
   * Lays {@code request} out in {@code job}'s current allocation.
   *
   * @throws IllegalArgumentException with Slurm's words, when it does not fit
   */
  static Laid layout(JobRecord job, StepRequest request) {
    var nodes = new ArrayList<String>(job.placement.size());
    var busy = new ArrayList<Integer>(job.placement.size());
    for (TaskPlacement t : job.placement) {
      nodes.add(t.node());
      busy.add(0);
    }
    // GPU index on entry i -> how many live steps' tasks hold it.
    var gpuUse = new ArrayList<TreeMap<Integer, Integer>>();
    for (int i = 0; i < nodes.size(); i++) {
      gpuUse.add(new TreeMap<>());
    }
    for (StepRecord s : job.steps) {
      if (s.isEnded()) {
        continue;
      }
      for (int e = 0; e < s.placement.size(); e++) {
        int i = nodes.indexOf(s.placement.get(e).node());
        if (i >= 0 && s.entryExits.get(e) == null) {
          busy.set(i, busy.get(i) + s.tasksPerNode.get(e));
          if (s.request.gpusPerTask() > 0) {
            for (int g : s.placement.get(e).gpus()) {
              gpuUse.get(i).merge(g, 1, Integer::sum);
            }
          }
        }
      }
    }
    StepLayout layout = StepLayout.of(request.ask(), nodes, busy);
    var gpus = new ArrayList<List<Integer>>(layout.nodes().size());
    for (int k = 0; k < layout.nodes().size(); k++) {
      int i = layout.nodes().get(k);
      List<Integer> all = job.placement.get(i).gpus();
      int per = request.gpusPerTask();
      if (per == 0) {
        gpus.add(all);
        continue;
      }
      int need = per * layout.tasksPerNode().get(k);
      if (need > all.size()) {
        throw new IllegalArgumentException(
            "Invalid generic resource (gres) specification: "
                + layout.tasksPerNode().get(k)
                + " task(s) x "
                + per
                + " GPU(s) per task on "
                + nodes.get(i)
                + ", where the job has "
                + all.size());
      }
      var use = gpuUse.get(i);
      var order = new ArrayList<>(all);
      order.sort(
          Comparator.<Integer>comparingInt(g -> use.getOrDefault(g, 0)).thenComparing(g -> g));
      var mine = new ArrayList<>(order.subList(0, need));
      Collections.sort(mine);
      gpus.add(List.copyOf(mine));
    }
    return new Laid(layout, gpus);
  }

  ControlResult start(StartStep c) {
    JobRecord job = records.job(c.jobId());
    if (job == null) {
      return ControlResult.notFound("no job " + c.jobId());
    }
    if (job.state != JobState.RUNNING || job.requeueing || job.attempt != c.attempt()) {
      return ControlResult.conflict(
          "job " + c.jobId() + " is not running attempt " + c.attempt() + ": no step starts");
    }
    long live = job.steps.stream().filter(s -> !s.isEnded()).count();
    if (live >= MAX_LIVE) {
      return ControlResult.conflict(
          "job " + c.jobId() + " already runs " + live + " steps (at most " + MAX_LIVE + ")");
    }
    Laid laid;
    try {
      laid = layout(job, c.step());
    } catch (IllegalArgumentException e) {
      return ControlResult.conflict(e.getMessage());
    }
    var step = new StepRecord(job.nextStepId++, job.attempt, c.step(), c.atMs());
    var placement = new ArrayList<TaskPlacement>(laid.layout().nodes().size());
    for (int k = 0; k < laid.layout().nodes().size(); k++) {
      placement.add(
          new TaskPlacement(
              k, job.placement.get(laid.layout().nodes().get(k)).node(), laid.gpus().get(k)));
    }
    step.placement = List.copyOf(placement);
    step.tasksPerNode = laid.layout().tasksPerNode();
    step.entryExits = new ArrayList<>(Collections.nCopies(placement.size(), (Integer) null));
    step.taskExits = new ArrayList<>(Collections.nCopies(laid.layout().tasks(), (Integer) null));
    step.warnings = laid.layout().warnings();
    job.steps.add(step);
    return ControlResult.ok(List.of((long) step.id));
  }

  ControlResult cancel(CancelStep c) {
    JobRecord job = records.job(c.jobId());
    StepRecord step = job == null ? null : find(job, c.step());
    if (step == null) {
      return ControlResult.notFound("no step " + c.jobId() + "." + c.step());
    }
    if (step.isEnded()) {
      return ControlResult.conflict("step " + c.jobId() + "." + c.step() + " already ended");
    }
    if (step.cancelledBy == null) {
      step.cancelledBy = c.by();
    }
    step.killNow |= c.killNow();
    return ControlResult.OK;
  }

  /** An entry of a step ended on its node (a {@code TaskEnded} with a step). */
  ControlResult taskEnded(TaskEnded c) {
    NodeRecord node = records.node(c.node());
    JobRecord job = records.job(c.jobId());
    if (node == null || node.epoch != c.epoch()) {
      return ControlResult.conflict("stale epoch " + c.epoch() + " for node " + c.node());
    }
    StepRecord step = job == null ? null : find(job, c.step());
    if (step == null
        || !job.holdsGpus()
        || step.attempt != c.attempt()
        || job.attempt != c.attempt()
        || c.task() < 0
        || c.task() >= step.placement.size()
        || !step.placement.get(c.task()).node().equals(c.node())
        || step.entryExits.get(c.task()) != null) {
      return ControlResult.conflict("not a running step task of the current attempt");
    }
    int first = step.firstRank(c.task());
    int count = step.tasksPerNode.get(c.task());
    for (int r = 0; r < count; r++) {
      Integer code =
          c.exitCodes() != null && c.exitCodes().size() == count
              ? c.exitCodes().get(r)
              : Integer.valueOf(c.exitCode());
      step.taskExits.set(first + r, code);
    }
    entryEnded(job, step, c.task(), c.exitCode(), c.atMs());
    return ControlResult.OK;
  }

  /** Every running step entry of {@code job} on {@code node} (null: on any) is lost. */
  void lose(JobRecord job, String node, long atMs) {
    for (StepRecord step : List.copyOf(job.steps)) {
      for (int e = 0; e < step.placement.size(); e++) {
        if (step.entryExits.get(e) == null
            && (node == null || step.placement.get(e).node().equals(node))) {
          int first = step.firstRank(e);
          for (int r = 0; r < step.tasksPerNode.get(e); r++) {
            step.taskExits.set(first + r, ControlState.LOST_EXIT_CODE);
          }
          if (step.message == null) {
            step.message = "node " + step.placement.get(e).node() + " was lost";
          }
          entryEnded(job, step, e, ControlState.LOST_EXIT_CODE, atMs);
        }
      }
    }
  }

  /** The job stopped running ({@code why}): its running steps end CANCELLED with it. */
  static void jobStopped(JobRecord job, String why) {
    for (StepRecord step : job.steps) {
      if (!step.isEnded() && step.message == null) {
        step.message = why;
      }
    }
  }

  private void entryEnded(JobRecord job, StepRecord step, int entry, int code, long atMs) {
    step.entryExits.set(entry, code);
    if (step.entryExits.contains(null)) {
      return;
    }
    step.endMs = Math.max(atMs, step.startMs + 1);
    step.request = step.request.ended();
    prune(job);
    // The job may have been waiting for its steps' tasks to stop before letting its GPUs go.
    if (job.releasing) {
      lifecycle.holdUntilStopped(job, atMs);
    } else if (job.requeueing) {
      lifecycle.completeRequeueWhenStopped(job, atMs);
    }
  }

  /** Drops the oldest ended steps beyond {@link #ENDED_KEPT}. */
  private static void prune(JobRecord job) {
    int ended = 0;
    for (StepRecord s : job.steps) {
      ended += s.isEnded() ? 1 : 0;
    }
    var it = job.steps.iterator();
    while (ended > ENDED_KEPT && it.hasNext()) {
      if (it.next().isEnded()) {
        it.remove();
        ended--;
      }
    }
  }

  static StepRecord find(JobRecord job, Integer id) {
    if (id == null) {
      return null;
    }
    for (StepRecord s : job.steps) {
      if (s.id == id) {
        return s;
      }
    }
    return null;
  }
}

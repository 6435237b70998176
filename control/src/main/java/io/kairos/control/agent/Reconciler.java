package io.kairos.control.agent;

import io.kairos.control.state.ControlCommand.TaskEnded;
import io.kairos.control.state.ControlState;
import io.kairos.control.state.ElasticResizes;
import io.kairos.control.state.JobCheckpoints;
import io.kairos.control.state.JobRecord;
import io.kairos.control.state.StepRecord;
import io.kairos.control.state.StepRequest;
import io.kairos.protocol.JobState;
import io.kairos.protocol.TaskPlacement;
import io.kairos.protocol.agent.ExitReason;
import io.kairos.protocol.agent.Heartbeat;
import io.kairos.protocol.agent.TaskAssignment;
import io.kairos.protocol.agent.TaskCheckpoint;
import io.kairos.protocol.agent.TaskKill;
import io.kairos.protocol.agent.TaskRef;
import io.kairos.protocol.agent.TaskReport;
import io.kairos.protocol.agent.TaskStatus;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

/**
 * Compares what an agent reports with what the state says should run on its node. Pure: reads the
 * state (under the caller's read lock), returns what to do.
 *
 * <ul>
 *   <li>a task of a running job, current attempt, placed here, not reported and not ended: launch
 *       it (the agent ignores a launch it already holds);
 *   <li>a reported live task the state does not expect here (cancelled, requeued, older attempt):
 *       kill it;
 *   <li>a reported exit the state has not recorded: record it (a {@code TaskEnded} command);
 *   <li>a reported exit the state has recorded or no longer cares about: tell the agent to forget
 *       it.
 * </ul>
 *
 * <p>The same for job steps (srun): each live step's entries on this node are launched (no barrier:
 * srun waits for them), a step's task still running once the step was cancelled or the job stopped
 * is killed alone ({@link TaskKill#step}; at once when srun was signalled), and its end is
 * recorded. A launch carries the job's step credential when {@code tokens} has one for the job's
 * attempt ({@link AgentService} mints it).
 *
 * <p>A batch job's task 0 is its batch step: its assignment carries the script. Its other tasks are
 * holders of the allocation on their nodes.
 */
public final class Reconciler {
  /** What to send back, and which exits to commit first. */
  public record Plan(
      List<TaskAssignment> launch,
      List<TaskKill> kill,
      List<TaskRef> forget,
      List<TaskReport> toRecord) {
    public boolean isEmpty() {
      return launch.isEmpty() && kill.isEmpty() && forget.isEmpty() && toRecord.isEmpty();
    }
  }

  private Reconciler() {}

  public static Plan plan(ControlState state, Heartbeat hb) {
    return plan(state, hb, job -> null);
  }

  /**
   * As {@link #plan(ControlState, Heartbeat)}, with each launch carrying the step credential that
   * {@code tokens} gives for its job's current attempt (null: none yet).
   */
  public static Plan plan(ControlState state, Heartbeat hb, Function<JobRecord, String> tokens) {
    return plan(state, hb, tokens, Long.MAX_VALUE);
  }

  /**
   * As {@link #plan(ControlState, Heartbeat, Function)} at {@code nowMs} (the leader's clock): a
   * job that a preemption asks for a checkpoint gets its checkpoint signal ({@link
   * TaskKill#askCheckpoint}) until the checkpoint arrives or its timeout has passed, then the stop.
   */
  public static Plan plan(
      ControlState state, Heartbeat hb, Function<JobRecord, String> tokens, long nowMs) {
    var launch = new ArrayList<TaskAssignment>();
    var kill = new ArrayList<TaskKill>();
    var forget = new ArrayList<TaskRef>();
    var toRecord = new ArrayList<TaskReport>();
    Set<TaskRef> held = new HashSet<>();
    List<TaskReport> reports = hb.tasks() == null ? List.of() : hb.tasks();
    for (TaskReport r : reports) {
      var ref = r.ref();
      held.add(ref);
      JobRecord job = state.job(r.jobId()).orElse(null);
      if (r.step() != null) {
        step(job, r, hb.node(), kill, forget, toRecord);
        continue;
      }
      // A task the state still waits on: of the current attempt, here, of a job that holds GPUs.
      boolean awaited =
          isTracked(job, r.attempt(), r.task(), hb.node()) && job.taskExits.get(r.task()) == null;
      if (r.status() == TaskStatus.EXITED) {
        if (awaited) {
          toRecord.add(r);
        } else {
          forget.add(ref);
        }
      } else if (awaited
          && job.attempt == r.attempt()
          && JobCheckpoints.awaitsCheckpoint(job, nowMs)) {
        kill.add(
            TaskKill.askCheckpoint(
                r.jobId(), r.attempt(), job.request.checkpoint().signal(), killReason(job)));
      } else if (awaited && ElasticResizes.awaitsCheckpoint(job, nowMs)) {
        kill.add(
            TaskKill.askCheckpoint(
                r.jobId(), r.attempt(), job.request.checkpoint().signal(), "the job shrinks"));
      } else if (awaited && job.leaving.contains(r.task())) {
        kill.add(
            new TaskKill(
                r.jobId(), r.attempt(), "the job shrinks", killGraceSec(job, r.attempt())));
      } else if (!awaited || job.state != JobState.RUNNING || job.requeueing) {
        kill.add(
            new TaskKill(r.jobId(), r.attempt(), killReason(job), killGraceSec(job, r.attempt())));
      }
    }
    for (JobRecord job : state.jobsHoldingGpusOn(hb.node())) {
      if (job.state != JobState.RUNNING || job.requeueing) {
        neverStarted(job, hb.node(), held, toRecord);
        continue;
      }
      for (TaskPlacement t : job.placement) {
        if (t.node().equals(hb.node())
            && job.taskExits.get(t.task()) == null
            && !held.contains(new TaskRef(job.id, job.attempt, t.task()))) {
          launch.add(
              assignment(job, t, masterAddr(state, job), uuids(state, t), tokens.apply(job)));
        }
      }
      for (StepRecord step : job.steps) {
        if (!step.isLive() || step.attempt != job.attempt) {
          continue;
        }
        for (TaskPlacement t : step.placement) {
          if (t.node().equals(hb.node())
              && step.entryExits.get(t.task()) == null
              && !held.contains(new TaskRef(job.id, job.attempt, t.task(), step.id))) {
            launch.add(
                stepAssignment(
                    job, step, t, masterAddr(state, job), uuids(state, t), tokens.apply(job)));
          }
        }
      }
    }
    return new Plan(launch, kill, forget, toRecord);
  }

  /**
   * A stopping job's tasks placed on {@code node} that its agent does not hold never started there
   * (the job stopped before their launch reached the agent, which reports every task it holds in
   * every heartbeat, and sends the next heartbeat only after applying the last reply): their end is
   * recorded, so that the job's GPUs there are freed. Without this, a job cancelled or requeued in
   * the moment between its start and its launch held those GPUs until the node was lost.
   */
  private static void neverStarted(
      JobRecord job, String node, Set<TaskRef> held, List<TaskReport> toRecord) {
    for (TaskPlacement t : job.placement) {
      if (t.node().equals(node)
          && job.taskExits.get(t.task()) == null
          && !held.contains(new TaskRef(job.id, job.attempt, t.task()))) {
        toRecord.add(
            new TaskReport(
                job.id,
                job.attempt,
                t.task(),
                TaskStatus.EXITED,
                ControlState.LOST_EXIT_CODE,
                ExitReason.KILLED,
                "never started on node " + node + ": the job stopped before its launch",
                null,
                null));
      }
    }
  }

  /** A step task's report: record its end, forget it, or kill it once its step should not run. */
  private static void step(
      JobRecord job,
      TaskReport r,
      String node,
      List<TaskKill> kill,
      List<TaskRef> forget,
      List<TaskReport> toRecord) {
    StepRecord step = job == null ? null : state(job, r.step());
    boolean awaited =
        step != null
            && job.holdsGpus()
            && job.attempt == r.attempt()
            && step.attempt == r.attempt()
            && r.task() >= 0
            && r.task() < step.placement.size()
            && step.placement.get(r.task()).node().equals(node)
            && step.entryExits.get(r.task()) == null;
    if (r.status() == TaskStatus.EXITED) {
      if (awaited) {
        toRecord.add(r);
      } else {
        forget.add(r.ref());
      }
    } else if (!awaited || !step.isLive() || job.state != JobState.RUNNING || job.requeueing) {
      Long grace = step != null && step.killNow ? Long.valueOf(0) : killGraceSec(job, r.attempt());
      String why =
          step == null
              ? "unknown step"
              : step.cancelledBy != null
                  ? "step cancelled by " + step.cancelledBy
                  : killReason(job);
      kill.add(new TaskKill(r.jobId(), r.attempt(), why, grace, r.step()));
    }
  }

  private static StepRecord state(JobRecord job, int step) {
    for (StepRecord s : job.steps) {
      if (s.id == step) {
        return s;
      }
    }
    return null;
  }

  private static boolean isTracked(JobRecord job, int attempt, int task, String node) {
    return job != null
        && job.holdsGpus()
        && job.attempt == attempt
        && task >= 0
        && task < job.placement.size()
        && job.placement.get(task).node().equals(node);
  }

  /** A preemption's grace for the task of the attempt it stops; null: the task's own. */
  private static Long killGraceSec(JobRecord job, int attempt) {
    return job != null && job.isBeingPreempted() && job.attempt == attempt && job.stopGraceSec >= 0
        ? job.stopGraceSec
        : null;
  }

  private static String killReason(JobRecord job) {
    if (job == null) {
      return "unknown job";
    }
    if (job.requeueing) {
      return "job " + job.message;
    }
    return switch (job.state) {
      case CANCELLED -> "job cancelled";
      case FAILED -> "job failed: " + job.message;
      case PENDING -> "job requeued";
      default -> "not expected on this node";
    };
  }

  /** The host of rank 0's node, from its agent's registered address; null when unknown. */
  static String masterAddr(ControlState state, JobRecord job) {
    if (job.placement.isEmpty()) {
      return null;
    }
    return state
        .node(job.placement.get(0).node())
        .map(n -> n.registration == null ? null : n.registration.address())
        .map(Reconciler::host)
        .orElse(null);
  }

  static String host(String url) {
    try {
      return java.net.URI.create(url).getHost();
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  /** The UUIDs of the task's GPUs, from its node's registration; null when one is unknown. */
  static List<String> uuids(ControlState state, TaskPlacement t) {
    var reg = state.node(t.node()).map(n -> n.registration).orElse(null);
    if (reg == null) {
      return null;
    }
    var out = new ArrayList<String>(t.gpus().size());
    for (int g : t.gpus()) {
      if (g < 0 || g >= reg.gpus().size() || reg.gpus().get(g).uuid() == null) {
        return null;
      }
      out.add(reg.gpus().get(g).uuid());
    }
    return out;
  }

  /** The launch of a step's entry {@code t}: srun's command and environment, the job's owner. */
  static TaskAssignment stepAssignment(
      JobRecord job,
      StepRecord step,
      TaskPlacement t,
      String masterAddr,
      List<String> gpuUuids,
      String token) {
    var r = job.request;
    var stepNodes = new ArrayList<String>(step.placement.size());
    for (TaskPlacement p : step.placement) {
      stepNodes.add(p.node());
    }
    var jobNodes = new ArrayList<String>(job.placement.size());
    for (TaskPlacement p : job.placement) {
      jobNodes.add(p.node());
    }
    StepRequest s = step.request;
    return checkpointed(
        job,
        new TaskAssignment(
            job.id,
            job.attempt,
            t.task(),
            step.placement.size(),
            stepNodes,
            r.name(),
            r.user(),
            s.command(),
            s.env(),
            s.workdir(),
            t.gpus(),
            s.cpusPerTask(),
            0,
            0,
            masterAddr,
            gpuUuids,
            r.killSignal(),
            r.graceSec(),
            null,
            0,
            r.checkpointDir().isEmpty() ? null : r.checkpointDir(),
            false,
            job.requeues,
            null,
            null,
            r.unixAccount(),
            step.id,
            step.tasksPerNode,
            s.gpusPerTask() > 0 ? s.gpusPerTask() : null,
            jobNodes,
            token));
  }

  static TaskAssignment assignment(
      JobRecord job, TaskPlacement t, String masterAddr, List<String> gpuUuids) {
    return assignment(job, t, masterAddr, gpuUuids, null);
  }

  static TaskAssignment assignment(
      JobRecord job, TaskPlacement t, String masterAddr, List<String> gpuUuids, String token) {
    var r = job.request;
    var nodes = new ArrayList<String>(job.placement.size());
    for (TaskPlacement p : job.placement) {
      nodes.add(p.node());
    }
    return checkpointed(
        job,
        new TaskAssignment(
            job.id,
            job.attempt,
            t.task(),
            job.placement.size(),
            nodes,
            r.name(),
            r.user(),
            r.command(),
            ElasticResizes.env(
                job, job.array == null ? r.env() : job.array.withVariables(r.env()), masterAddr),
            r.workdir(),
            t.gpus(),
            r.cpus(),
            r.memoryMb(),
            r.timeLimitSec(),
            masterAddr,
            gpuUuids,
            r.killSignal(),
            r.graceSec(),
            r.warnSignal(),
            r.warnBeforeSec(),
            r.checkpointDir().isEmpty() ? null : r.checkpointDir(),
            job.placement.size() > 1,
            job.requeues,
            r.output().isEmpty() ? null : r.output(),
            r.error().isEmpty() ? null : r.error(),
            r.unixAccount(),
            null,
            r.layout() == null ? null : r.tasksPerNode(),
            r.layout() == null || r.taskLayout().gpusPerTask() == 0
                ? null
                : r.taskLayout().gpusPerTask(),
            null,
            token,
            r.isBatch() && t.task() == 0 ? r.script() : null,
            r.isBatch() && t.task() > 0 ? Boolean.TRUE : null,
            null));
  }

  /** {@code a} with the job's checkpoint declaration and newest step, when it declares one. */
  private static TaskAssignment checkpointed(JobRecord job, TaskAssignment a) {
    var policy = job.request.checkpoint();
    if (policy == null) {
      return a;
    }
    var newest = JobCheckpoints.newest(job);
    return a.withCheckpoint(
        new TaskCheckpoint(
            policy.signal(),
            policy.timeoutSec(),
            policy.everySec(),
            policy.keep(),
            newest == null ? null : newest.step()));
  }

  /** The command that records a reported end; stamped {@code nowMs} when the agent gave no time. */
  static TaskEnded ended(Heartbeat hb, TaskReport r, long nowMs) {
    long at = r.endedAtMs() != null ? r.endedAtMs() : nowMs;
    return new TaskEnded(
        at,
        hb.node(),
        hb.epoch(),
        r.jobId(),
        r.attempt(),
        r.task(),
        r.exitCode() == null ? -1 : r.exitCode(),
        r.reason(),
        r.message(),
        r.step(),
        r.exitCodes());
  }
}

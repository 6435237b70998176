package io.kairos.control.api;

import io.kairos.control.agent.AgentService;
import io.kairos.control.sched.SchedulerLoop;
import io.kairos.control.state.ControlState;
import io.kairos.control.state.JobRecord;
import io.kairos.control.state.NodeRecord;
import io.kairos.protocol.JobState;
import io.kairos.protocol.JobView;
import io.kairos.protocol.NodeView;
import io.kairos.protocol.TaskPlacement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Records to API views. Callers hold the state's read lock. */
final class Views {
  private Views() {}

  /**
   * The job as {@code showPrivate} allows: without it, its private data (command, env, workdir,
   * checkpoint directory) is left out and {@code redacted} names what was.
   */
  static JobView job(
      ControlState state, JobRecord j, SchedulerLoop scheduler, boolean showPrivate) {
    var r = j.request;
    String reason = null;
    String detail = null;
    String predictedStart = null;
    if (j.state == JobState.PENDING) {
      if (state.isWaitingOnDependency(j.id)) {
        reason = "DEPENDENCY";
        detail = "waits for " + state.dependencyDetail(j.id).orElse(String.valueOf(r.dependency()));
      } else if (state.isHeldByArrayLimit(j.id)) {
        reason = "ARRAY_LIMIT";
        detail =
            "array "
                + j.array.arrayJobId()
                + " runs at most "
                + j.array.limit()
                + " elements at once (%"
                + j.array.limit()
                + "); "
                + state.arrayAdmitted(j.array.arrayJobId())
                + " are queued or running";
      } else if (state.isUnplaceable(j.id)) {
        var account = state.accountBlock(j.id);
        reason = account.isPresent() ? "NO_NODE_RUNS_AS" : "NO_NODE_CAN_HOLD";
        detail =
            account.isPresent()
                ? account.get()
                : state.store() == null
                    ? "no node is registered yet"
                    : "no registered node can ever hold it ("
                        + r.tasks()
                        + " node(s) with "
                        + r.gpusPerTask()
                        + " GPUs"
                        + (r.gpuModel().isEmpty() ? "" : " of model " + r.gpuModel())
                        + ")";
      } else {
        var p = scheduler.pending(j.id);
        if (p == null) {
          reason = "NOT_YET_CONSIDERED";
          detail = "submitted after the last scheduling pass";
        } else {
          reason = p.reason().name();
          detail = describe(p);
          if (!j.migrationTarget.isEmpty()) {
            detail =
                "migrated: restarts on "
                    + String.join(", ", j.migrationTarget)
                    + (j.migrationHoldEndsMs > 0
                        ? " (held for it until "
                            + Instant.ofEpochMilli(j.migrationHoldEndsMs)
                            + ", then it may start anywhere); "
                        : " (held for it); ")
                    + detail;
          }
          if (p.predictedStartSec() >= 0) {
            predictedStart = Instant.ofEpochSecond(p.predictedStartSec()).toString();
          }
        }
      }
    }
    return new JobView(
        j.id,
        r.name(),
        r.user(),
        r.queue(),
        r.priority(),
        j.state,
        showPrivate ? r.command() : null,
        showPrivate ? r.env() : null,
        !showPrivate || r.workdir().isEmpty() ? null : r.workdir(),
        r.gpus(),
        r.gpusPerNode() == 0 ? null : r.gpusPerNode(),
        r.tasks(),
        r.cpus(),
        r.memoryMb(),
        r.timeLimitSec(),
        r.gpuModel().isEmpty() ? null : r.gpuModel(),
        time(j.submitMs),
        j.attempt > 0 ? time(j.startMs) : null,
        j.state.isFinal() ? time(j.endMs) : null,
        reason,
        detail,
        j.attempt,
        j.requeues,
        j.exitCode,
        j.message,
        j.placement.isEmpty() ? null : j.placement,
        j.state == JobState.PENDING && j.eligibleMs > 0 ? time(j.eligibleMs) : null,
        !showPrivate || r.checkpointDir().isEmpty() ? null : r.checkpointDir(),
        excluded(r.excludeNodes(), j.avoidNodes),
        predictedStart,
        j.array == null ? null : j.array.arrayJobId(),
        j.array == null ? null : j.array.taskId(),
        r.dependency() == null ? null : r.dependency().toString(),
        r.account().isEmpty() ? null : r.account(),
        r.priorityClass().isEmpty() ? null : r.priorityClass(),
        j.preemptedAtSec.isEmpty()
            ? null
            : j.preemptedAtSec.stream().map(t -> Instant.ofEpochSecond(t).toString()).toList(),
        j.lastPreemptedBy == 0 ? null : j.lastPreemptedBy,
        r.unixAccount(),
        showPrivate ? null : JobView.PRIVATE_FIELDS,
        r.isBatch() ? utf8Length(r.script()) : null,
        lastCheckpoint(j, showPrivate),
        elastic(j));
  }

  /** An elastic job's size and resizes; null for a job of a fixed size. */
  private static io.kairos.protocol.ElasticView elastic(JobRecord j) {
    var r = j.request;
    if (!r.isElastic()) {
      return null;
    }
    int nodes =
        j.state == JobState.RUNNING
            ? io.kairos.control.state.ElasticResizes.liveTasks(j).size()
            : 0;
    return new io.kairos.protocol.ElasticView(
        nodes,
        r.tasks(),
        r.maxTasks(),
        r.maxGpus(),
        j.resizes.stream()
            .map(
                e ->
                    time(e.atMs())
                        + ": "
                        + e.fromNodes()
                        + " -> "
                        + e.toNodes()
                        + " nodes ("
                        + e.why()
                        + ")")
            .toList());
  }

  private static io.kairos.protocol.CheckpointView lastCheckpoint(JobRecord j, boolean all) {
    var e = io.kairos.control.state.JobCheckpoints.newest(j);
    if (e == null) {
      return null;
    }
    var v = CheckpointRoutes.view(e);
    return all
        ? v
        : new io.kairos.protocol.CheckpointView(
            v.step(), v.attempt(), v.time(), v.sizeBytes(), null, v.files());
  }

  /** The length of {@code s} in UTF-8, without encoding it. */
  static int utf8Length(String s) {
    int bytes = 0;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x80) {
        bytes++;
      } else if (c < 0x800) {
        bytes += 2;
      } else if (Character.isHighSurrogate(c) && i + 1 < s.length()) {
        bytes += 4;
        i++;
      } else {
        bytes += 3;
      }
    }
    return bytes;
  }

  private static String describe(SchedulerLoop.Pending p) {
    String text =
        switch (p.reason()) {
          case INSUFFICIENT_GPUS -> "fewer GPUs are free than the job needs";
          case NO_PLACEMENT -> "enough GPUs are free, but no set of nodes holds the whole gang";
          case WOULD_DELAY_RESERVATION -> "it fits, but starting it would delay a reserved job";
          case RESERVED -> "holds a reservation";
          case WAITING_FOR_EARLIER_JOB -> "an earlier job waits first (strict order)";
          case BEGIN_TIME -> "held until its begin time (a requested begin or a requeue backoff)";
          case NEVER_FITS ->
              "the nodes it may use (not excluded; with queues, of one GPU model at a time, as quota"
                  + " is per model) could never hold it";
          case QUOTA -> "its queue has no quota left for it";
          case PREEMPTING -> "running jobs are stopping to make room for it";
        };
    if (p.detail() != null && !p.detail().isBlank()) {
      text += ": " + p.detail();
    }
    if (p.reservedStartSec() >= 0) {
      text += "; reserved from " + Instant.ofEpochSecond(p.reservedStartSec());
    }
    if (p.predictedStartSec() >= 0) {
      text += "; predicted start " + Instant.ofEpochSecond(p.predictedStartSec());
    }
    return text;
  }

  private static List<String> excluded(List<String> asked, List<String> avoided) {
    if (asked.isEmpty() && avoided.isEmpty()) {
      return null;
    }
    var all = new java.util.TreeSet<>(asked);
    all.addAll(avoided);
    return List.copyOf(all);
  }

  static NodeView node(
      ControlState state,
      NodeRecord n,
      Optional<Long> lastSeenMs,
      Optional<AgentService.Liveness> live) {
    var reg = n.registration;
    var jobs = new ArrayList<Long>();
    var gpuJobs =
        new ArrayList<Long>(java.util.Collections.nCopies(reg.gpus().size(), (Long) null));
    int used = 0;
    for (JobRecord j : state.jobsHoldingGpusOn(n.name)) {
      jobs.add(j.id);
      for (TaskPlacement t : j.placement) {
        if (t.node().equals(n.name) && !j.releasedTask(t.task())) {
          used += t.gpus().size();
          for (int gpu : t.gpus()) {
            if (gpu >= 0 && gpu < gpuJobs.size()) {
              gpuJobs.set(gpu, j.id);
            }
          }
        }
      }
    }
    return new NodeView(
        n.name,
        n.state,
        n.reason,
        reg.gpus().isEmpty() ? null : reg.gpus().get(0).model(),
        reg.gpus().size(),
        used,
        reg.cpus(),
        reg.memoryBytes(),
        reg.zone(),
        reg.block(),
        reg.rack(),
        reg.address(),
        n.epoch,
        jobs,
        lastSeenMs.map(Views::time).orElse(null),
        live.map(AgentService.Liveness::state).orElse(null),
        live.map(l -> Math.round(l.phi() * 100) / 100.0).orElse(null),
        reg.nvlinkDomainSize(),
        java.util.Collections.unmodifiableList(gpuJobs),
        reg.runsOnlyAs(),
        n.gpusOutOfService.isEmpty() ? null : Map.copyOf(n.gpusOutOfService));
  }

  static String time(long ms) {
    return Instant.ofEpochMilli(ms).toString();
  }
}

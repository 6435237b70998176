package io.kairos.cli;

import io.kairos.protocol.JobState;
import io.kairos.protocol.JobView;
import io.kairos.protocol.TaskPlacement;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/** How the client commands show parts of a job: its nodes, its command, its end. */
final class JobText {
  private JobText() {}

  private static final Pattern PLAIN = Pattern.compile("[A-Za-z0-9_@%+=:,./-]+");

  /** The distinct nodes a job runs on, in task order; empty when it has no placement. */
  static List<String> nodes(JobView job) {
    List<TaskPlacement> placement = job.placement();
    return placement == null
        ? List.of()
        : placement.stream().map(TaskPlacement::node).distinct().toList();
  }

  /**
   * The GPUS column: the count; for an elastic job the GPUs it holds now and its range, e.g. "24
   * (16-32)" (its minimum while it waits).
   */
  static String gpusColumn(JobView job) {
    var e = job.elastic();
    if (e == null) {
      return String.valueOf(job.gpus());
    }
    int perNode = job.gpusPerNode() == null ? 0 : job.gpusPerNode();
    int now = e.nodes() * perNode;
    return (now == 0 ? job.gpus() : now) + " (" + job.gpus() + "-" + e.maxGpus() + ")";
  }

  /**
   * The NODES column: the node list for a job that has nodes (at most {@code 3} named, then {@code
   * +N}), else the number of tasks it asks for.
   */
  static String nodesColumn(JobView job) {
    List<String> nodes = nodes(job);
    if (job.state() != JobState.RUNNING || nodes.isEmpty()) {
      return String.valueOf(job.tasks());
    }
    if (nodes.size() <= 3) {
      return String.join(",", nodes);
    }
    return String.join(",", nodes.subList(0, 3)) + ",+" + (nodes.size() - 3);
  }

  /** The command as a shell would read it back: arguments quoted where needed. */
  static String commandLine(List<String> command) {
    if (command == null) {
      return "";
    }
    return command.stream()
        .map(a -> PLAIN.matcher(a).matches() ? a : "'" + a.replace("'", "'\\''") + "'")
        .collect(Collectors.joining(" "));
  }

  /** One line on a job's state: {@code Job 42 RUNNING on n1,n2}, {@code Job 42 FAILED: ...}. */
  static String stateLine(JobView job) {
    var sb = new StringBuilder("Job ").append(job.id()).append(' ').append(job.state());
    switch (job.state()) {
      case PENDING -> {
        if (job.pendingReason() != null) {
          sb.append(" (").append(job.pendingReason()).append(')');
        }
      }
      case RUNNING -> {
        if (!nodes(job).isEmpty()) {
          sb.append(" on ").append(String.join(",", nodes(job)));
        }
      }
      case SUCCEEDED, FAILED, CANCELLED -> {
        if (job.message() != null) {
          sb.append(": ").append(job.message());
        } else if (job.exitCode() != null && job.exitCode() != 0) {
          sb.append(": exit code ").append(job.exitCode());
        }
      }
    }
    return sb.toString();
  }

  /**
   * The exit code {@code submit --wait} ends with: 0 for SUCCEEDED; the job's exit code for FAILED
   * when it is 1..255, else 1; 1 for CANCELLED.
   */
  static int exitCode(JobView job) {
    return switch (job.state()) {
      case SUCCEEDED -> 0;
      case FAILED -> {
        Integer code = job.exitCode();
        yield code != null && code >= 1 && code <= 255 ? code : 1;
      }
      case CANCELLED -> 1;
      case PENDING, RUNNING -> throw new IllegalStateException("job " + job.id() + " is not final");
    };
  }
}

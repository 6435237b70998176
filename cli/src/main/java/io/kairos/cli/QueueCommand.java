package io.kairos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.protocol.JobState;
import io.kairos.protocol.JobView;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code kairos queue}: the jobs waiting and running, like Slurm's squeue. */
@Command(
    name = "queue",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "List jobs, pending and running by default (like squeue).",
      "NODES is the node list of a running job, else the number of nodes (tasks) it needs;"
          + " AGE is the time since submission; REASON is why a pending job waits.",
      ""
    })
final class QueueCommand extends ApiCommand {
  @Option(names = "--all", description = "Jobs in every state, finished ones too.")
  boolean all;

  @Option(
      names = "--state",
      paramLabel = "STATE[,STATE...]",
      split = ",",
      description = "Only these states: PENDING, RUNNING, SUCCEEDED, FAILED, CANCELLED.")
  List<String> states;

  @Option(names = "--user", paramLabel = "USER", description = "Only this user's jobs.")
  String user;

  @Option(names = "--queue", paramLabel = "QUEUE", description = "Only this queue's jobs.")
  String queue;

  @Override
  int run(ApiClient api, PrintWriter out) {
    String stateFilter =
        states != null && !states.isEmpty() ? parseStates(states) : all ? null : "PENDING,RUNNING";
    var params = new LinkedHashMap<String, String>();
    params.put("state", stateFilter);
    params.put("user", user);
    params.put("queue", queue);
    JsonNode reply = api.get("/api/v1/jobs" + ApiClient.query(params));
    List<JobView> jobs = Json.list(reply, JobView.class);
    if (isJson()) {
      Json.print(out, reply);
      return 0;
    }
    Instant now = Environment.clock.instant();
    var table = new Table("ID", "NAME", "USER", "QUEUE", "STATE", "GPUS", "NODES", "AGE", "REASON");
    for (JobView j : jobs) {
      Instant submitted = TimeFormat.parse(j.submitTime());
      table.row(
          id(j),
          j.name(),
          j.user(),
          j.queue(),
          j.state(),
          JobText.gpusColumn(j),
          JobText.nodesColumn(j),
          submitted == null ? "-" : TimeFormat.age(Duration.between(submitted, now)),
          reason(j));
    }
    table.print(out);
    return 0;
  }

  /**
   * Why a pending job waits; for quota and preemption with the pass's detail (the numbers, the jobs
   * stopping), which is what a user needs to act on. A running job that a preemption is stopping
   * says so.
   */
  static String reason(JobView j) {
    if (j.state() == JobState.RUNNING
        && j.message() != null
        && j.message().startsWith("preempted by")) {
      return "STOPPING (" + j.message() + ")";
    }
    if (j.state() != JobState.PENDING || j.pendingReason() == null) {
      return "";
    }
    boolean withDetail =
        j.pendingReason().equals("QUOTA") || j.pendingReason().equals("PREEMPTING");
    return withDetail && j.pendingDetail() != null
        ? j.pendingReason() + " (" + j.pendingDetail() + ")"
        : j.pendingReason();
  }

  /** The job's id; an array element also shows Slurm's ARRAYID_INDEX, e.g. {@code 12 (10_2)}. */
  static String id(JobView j) {
    return j.arrayJobId() == null || j.arrayTaskId() == null
        ? Long.toString(j.id())
        : j.id() + " (" + j.arrayJobId() + "_" + j.arrayTaskId() + ")";
  }

  /** {@code pending,Running} → {@code PENDING,RUNNING}; an unknown state is a usage error. */
  static String parseStates(List<String> names) {
    return names.stream()
        .map(String::strip)
        .filter(s -> !s.isEmpty())
        .map(
            s -> {
              try {
                return JobState.valueOf(s.toUpperCase(Locale.ROOT)).name();
              } catch (IllegalArgumentException e) {
                throw new UsageException(
                    "--state: unknown state '"
                        + s
                        + "'; use "
                        + Arrays.stream(JobState.values())
                            .map(Enum::name)
                            .collect(Collectors.joining(", ")));
              }
            })
        .distinct()
        .collect(Collectors.joining(","));
  }
}

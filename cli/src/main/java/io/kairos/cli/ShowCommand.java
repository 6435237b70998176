package io.kairos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.protocol.JobState;
import io.kairos.protocol.JobView;
import io.kairos.protocol.TaskPlacement;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code kairos show ID}: one job in detail, one {@code key: value} per line. */
@Command(
    name = "show",
    mixinStandardHelpOptions = true,
    description = {
      "Show one job in detail: its request, its times (local), why it waits or how it ended, and"
          + " where its tasks run.",
      ""
    })
final class ShowCommand extends ApiCommand {
  /**
   * What a field the controller withheld shows: the job's private data (its env, command, paths),
   * which only its owner and admins see unless the controller's --private-data widens it.
   */
  static final String PRIVATE = "(private)";

  @Parameters(paramLabel = "ID", description = "The job id.")
  long id;

  @Override
  int run(ApiClient api, PrintWriter out) {
    JsonNode reply = api.get("/api/v1/jobs/" + id);
    if (isJson()) {
      Json.print(out, reply);
      return 0;
    }
    JobView j = Json.convert(reply, JobView.class);
    lines(j, Environment.clock.instant()).forEach(out::println);
    return 0;
  }

  static List<String> lines(JobView j, Instant now) {
    var rows = new ArrayList<String[]>();
    rows.add(row("id", j.id()));
    rows.add(row("name", j.name()));
    rows.add(row("user", j.user()));
    if (j.runAs() != null) {
      rows.add(row("runs as", j.runAs() + " (Unix account)"));
    }
    rows.add(row("queue", j.queue()));
    if (j.account() != null) {
      rows.add(row("account", j.account()));
    }
    rows.add(
        row(
            "priority",
            j.priority()
                + (j.priorityClass() == null ? "" : " (class " + j.priorityClass() + ")")));
    rows.add(row("state", j.state()));
    if (j.state() == JobState.PENDING && j.pendingReason() != null) {
      rows.add(
          row(
              "reason",
              j.pendingReason() + (j.pendingDetail() == null ? "" : ": " + j.pendingDetail())));
    }
    boolean hidden = j.redacted() != null && !j.redacted().isEmpty();
    rows.add(row("command", hidden ? PRIVATE : JobText.commandLine(j.command())));
    rows.add(row("workdir", hidden ? PRIVATE : j.workdir() == null ? "-" : j.workdir()));
    Map<String, String> env = j.env();
    if (hidden) {
      rows.add(row("env", PRIVATE));
    } else if (env != null && !env.isEmpty()) {
      rows.add(
          row(
              "env",
              env.entrySet().stream()
                  .map(e -> e.getKey() + "=" + e.getValue())
                  .collect(Collectors.joining(" "))));
    }
    rows.add(
        row(
            "gpus",
            j.gpus() + (j.gpusPerNode() == null ? "" : " (" + j.gpusPerNode() + " per node)")));
    rows.add(row("tasks", j.tasks()));
    if (j.elastic() != null) {
      var e = j.elastic();
      rows.add(
          row(
              "elastic",
              e.nodes()
                  + " nodes now, "
                  + e.minNodes()
                  + " to "
                  + e.maxNodes()
                  + " allowed (up to "
                  + e.maxGpus()
                  + " GPUs)"));
      for (String resize : e.resizes()) {
        rows.add(row("resized", resize));
      }
    }
    rows.add(row("cpus", j.cpus() + " per task"));
    rows.add(row("memory", j.memoryMb() == 0 ? "not limited" : j.memoryMb() + " MiB per task"));
    rows.add(row("time limit", TimeFormat.elapsed(Duration.ofSeconds(j.timeLimitSec()))));
    rows.add(row("gpu model", j.gpuModel() == null ? "any" : j.gpuModel()));
    Instant submitted = TimeFormat.parse(j.submitTime());
    rows.add(
        row(
            "submitted",
            TimeFormat.full(j.submitTime(), Environment.zone)
                + (submitted == null
                    ? ""
                    : " (" + TimeFormat.age(Duration.between(submitted, now)) + " ago)")));
    if (j.eligibleTime() != null) {
      rows.add(
          row(
              "eligible",
              TimeFormat.full(j.eligibleTime(), Environment.zone) + " (requeue backoff)"));
    }
    if (hidden) {
      rows.add(row("checkpoints", PRIVATE));
    } else if (j.checkpointDir() != null) {
      rows.add(row("checkpoints", j.checkpointDir()));
    }
    if (j.lastCheckpoint() != null) {
      rows.add(
          row(
              "last checkpoint",
              "step "
                  + j.lastCheckpoint().step()
                  + " at "
                  + TimeFormat.full(j.lastCheckpoint().time(), Environment.zone)
                  + " ("
                  + CheckpointsCommand.size(j.lastCheckpoint().sizeBytes())
                  + "; kairos checkpoints "
                  + j.id()
                  + ")"));
    }
    if (j.excludeNodes() != null && !j.excludeNodes().isEmpty()) {
      rows.add(row("excluded", String.join(",", j.excludeNodes())));
    }
    if (j.startTime() != null) {
      rows.add(row("started", TimeFormat.full(j.startTime(), Environment.zone)));
    }
    if (j.endTime() != null) {
      rows.add(row("ended", TimeFormat.full(j.endTime(), Environment.zone)));
    }
    if (j.startTime() != null) {
      String until = j.endTime() != null ? j.endTime() : now.toString();
      rows.add(row("elapsed", TimeFormat.elapsed(j.startTime(), until)));
    }
    if (j.attempt() > 1 || j.requeues() > 0) {
      rows.add(row("attempt", j.attempt() + " (requeued " + j.requeues() + " times)"));
    }
    if (j.exitCode() != null) {
      rows.add(row("exit code", j.exitCode()));
    }
    if (j.preemptedAt() != null) {
      rows.add(
          row(
              "preempted",
              j.preemptedAt().size()
                  + " time(s), last at "
                  + TimeFormat.full(j.preemptedAt().getLast(), Environment.zone)
                  + (j.preemptedBy() == null ? "" : " by job " + j.preemptedBy())));
    }
    if (j.message() != null) {
      rows.add(row("message", j.message()));
    }
    int width = rows.stream().mapToInt(r -> r[0].length()).max().orElse(0) + 3;
    var lines = new ArrayList<String>();
    for (String[] r : rows) {
      lines.add((r[0] + ":" + " ".repeat(width - r[0].length() - 1) + r[1]).stripTrailing());
    }
    List<TaskPlacement> placement = j.placement();
    if (placement != null && !placement.isEmpty()) {
      lines.add("placement:");
      var table = new ArrayList<String>();
      for (TaskPlacement p : placement) {
        table.add(
            "  task "
                + p.task()
                + "  "
                + p.node()
                + "  GPUs "
                + (p.gpus() == null || p.gpus().isEmpty()
                    ? "-"
                    : p.gpus().stream().map(String::valueOf).collect(Collectors.joining(","))));
      }
      lines.addAll(table);
    }
    return lines;
  }

  private static String[] row(String key, Object value) {
    return new String[] {key, value == null ? "-" : String.valueOf(value)};
  }
}

package io.kairos.control.api;

import io.kairos.config.SlurmNames;
import io.kairos.config.Tenancy;
import io.kairos.core.tenancy.PriorityClass;
import io.kairos.core.tenancy.QueueSpec;
import io.kairos.protocol.JobSubmission;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The fields of a submission that come from Slurm: the batch script, the node count, the QOS, and
 * names as the site writes them ({@link SlurmNames}). {@link #apply} checks them and rewrites the
 * submission into the fields {@link Submissions#validate} knows: a partition becomes its queue (in
 * any case), a site GPU type its model, a QOS that names a priority class that class, and a node
 * count with GPUs the GPUs per node. What it accepts without honouring comes back as warnings.
 */
final class SlurmFields {
  /** The most nodes a job may ask for. */
  static final int MAX_NODES = Submissions.MAX_GPUS;

  private SlurmFields() {}

  /** The submission in Kairos' fields, and what the reply should warn about. */
  record Applied(JobSubmission submission, List<String> warnings) {}

  /**
   * @param tenancy the controller's tenancy (its priority classes), or null for none
   * @param prefix names the element in a batch ("[3].") in errors and warnings
   */
  static Applied apply(JobSubmission s, SlurmNames names, Tenancy tenancy, String prefix) {
    if (s == null) {
      return new Applied(null, List.of());
    }
    var warnings = new ArrayList<String>();
    script(s.script(), prefix + "script");
    String queue = s.queue() == null ? null : queue(names.queue(s.queue()), tenancy);
    String model = s.gpuModel() == null ? null : names.gpuModel(s.gpuModel());
    String priorityClass = s.priorityClass();
    if (s.qos() != null && priorityClass == null) {
      priorityClass = qos(s.qos(), names, tenancy, prefix + "qos", warnings);
    }
    Integer perNode = s.gpusPerNode();
    Integer nodes = s.nodes();
    if (nodes != null) {
      int gpus = s.gpus() == null ? 0 : s.gpus();
      Submissions.check(
          nodes >= 1 && nodes <= MAX_NODES,
          prefix + "nodes",
          "nodes must be between 1 and " + MAX_NODES + ", got " + nodes,
          "ask for the nodes the job spreads over");
      if (perNode != null) {
        int p = perNode;
        Submissions.check(
            p >= 1 && gpus == nodes * p,
            prefix + "nodes",
            nodes + " nodes with " + p + " GPUs each make " + nodes * p + " GPUs, not " + gpus,
            "leave nodes out, or set gpus to nodes x gpusPerNode");
        nodes = null;
      } else if (gpus > 0) {
        int n = nodes;
        Submissions.check(
            gpus % n == 0,
            prefix + "nodes",
            gpus + " GPUs do not split evenly over " + n + " nodes",
            "ask for a multiple of " + n + " GPUs, or set gpusPerNode");
        perNode = n > 1 ? gpus / n : null;
        nodes = null;
      }
    }
    var out =
        new JobSubmission(
                s.name(),
                s.command(),
                s.env(),
                s.workdir(),
                s.gpus(),
                perNode,
                s.cpus(),
                s.memoryMb(),
                s.timeLimit(),
                queue,
                s.priority(),
                model,
                s.user(),
                s.killSignal(),
                s.gracePeriod(),
                s.warnSignal(),
                s.checkpointDir(),
                s.maxRestarts(),
                s.excludeNodes(),
                s.array(),
                s.dependency(),
                s.output(),
                s.error(),
                s.account(),
                priorityClass,
                s.script(),
                nodes,
                null)
            .withTasks(s.ntasks(), s.ntasksPerNode(), s.gpusPerTask())
            .withCheckpoint(s.checkpoint())
            .withGpus(s.gpus(), s.maxGpus());
    return new Applied(out, List.copyOf(warnings));
  }

  /**
   * A batch script: text that starts with {@code #!} (sbatch refuses any other), without NUL, at
   * most {@link JobSubmission#MAX_SCRIPT_BYTES} as UTF-8 (413 past that).
   */
  private static void script(String script, String field) {
    if (script == null) {
      return;
    }
    // A char is at most 3 UTF-8 bytes; count exactly only near the limit.
    if ((long) script.length() * 3 > JobSubmission.MAX_SCRIPT_BYTES
        && script.getBytes(StandardCharsets.UTF_8).length > JobSubmission.MAX_SCRIPT_BYTES) {
      throw new ApiError(
          413,
          "Script too large",
          "the batch script is larger than " + (JobSubmission.MAX_SCRIPT_BYTES >> 20) + " MiB",
          field,
          "keep data out of the script: read it from a file the job opens");
    }
    Submissions.check(
        script.startsWith("#!"),
        field,
        "the batch script does not start with #! and an interpreter",
        "make its first line e.g. #!/bin/bash, as sbatch requires");
    Submissions.check(
        script.indexOf('\0') < 0, field, "the batch script contains NUL", "remove the NUL bytes");
  }

  /**
   * The tenancy's queue of that name, matched case-insensitively as Slurm users write partitions
   * (an exact match first); the name as given when there is none (the tenancy then refuses it) or
   * no tenancy (queues are names only). {@link SlurmNames#queue} has made it lower case already.
   */
  private static String queue(String name, Tenancy tenancy) {
    if (tenancy == null) {
      return name;
    }
    String match = null;
    for (QueueSpec q : tenancy.config().queues()) {
      if (q.name().equals(name)) {
        return name;
      }
      if (match == null && q.name().equalsIgnoreCase(name)) {
        match = q.name();
      }
    }
    return match == null ? name : match;
  }

  /** The priority class a QOS names; null (with a warning) when none, unless QOS is strict. */
  private static String qos(
      String qos, SlurmNames names, Tenancy tenancy, String field, List<String> warnings) {
    List<PriorityClass> classes = tenancy == null ? List.of() : tenancy.config().priorityClasses();
    for (PriorityClass c : classes) {
      if (c.name().equals(qos) || c.name().equalsIgnoreCase(qos)) {
        return c.name();
      }
    }
    String known =
        classes.isEmpty()
            ? "this controller has no priority classes"
            : "its priority classes are "
                + String.join(", ", classes.stream().map(PriorityClass::name).toList());
    Submissions.check(
        !names.strictQos(),
        field,
        "QOS '" + Submissions.clip(qos) + "' is not a priority class here: " + known,
        "name one of them, or leave --qos out");
    warnings.add(
        "--qos="
            + Submissions.clip(qos).toLowerCase(Locale.ROOT)
            + " was ignored: "
            + known
            + " (the job runs without one)");
    return null;
  }
}

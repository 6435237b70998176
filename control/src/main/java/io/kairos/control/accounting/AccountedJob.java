package io.kairos.control.accounting;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kairos.control.state.AttemptRecord;
import io.kairos.control.state.JobRecord;
import io.kairos.control.state.JobRequest;
import io.kairos.protocol.GpuDevice;
import io.kairos.protocol.TaskPlacement;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * An ended job as the store writes it: the job's columns, each attempt, the GPUs each attempt held
 * by model, and the job record itself (JSON, its env values left out) so that {@code GET
 * /api/v1/jobs/{id}} still shows it once the state has forgotten it.
 *
 * @param job the ended job (read under the state's read lock; an ended job that holds no GPUs no
 *     longer changes)
 * @param attempts every attempt the state still knows of, oldest first
 * @param recordJson the record, env values blanked
 */
public record AccountedJob(JobRecord job, List<Attempt> attempts, String recordJson) {
  static final ObjectMapper JSON =
      JsonMapper.builder().disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build();

  /** The model a GPU is recorded under when its node's registration is gone. */
  public static final String UNKNOWN_MODEL = "unknown";

  /**
   * One attempt and what it held.
   *
   * @param gpusByModel GPUs held, by model
   * @param cpus CPUs held (all tasks)
   * @param memoryMb memory held (all tasks)
   */
  public record Attempt(
      int attempt,
      long startMs,
      long endMs,
      List<String> nodes,
      Map<String, Integer> gpusByModel,
      int cpus,
      long memoryMb,
      Integer exitCode,
      String reason,
      long preemptedBy) {
    public Attempt {
      nodes = List.copyOf(nodes);
      gpusByModel = Map.copyOf(gpusByModel);
    }

    double seconds() {
      return Math.max(0, endMs - startMs) / 1000.0;
    }

    int gpus() {
      return gpusByModel.values().stream().mapToInt(Integer::intValue).sum();
    }
  }

  /**
   * The job's row. {@code gpusOf} gives a node's GPUs as registered (null when the node is gone):
   * each GPU an attempt held is counted under its model.
   */
  public static AccountedJob of(JobRecord job, Function<String, List<GpuDevice>> gpusOf) {
    var attempts = new ArrayList<Attempt>();
    int lastPast = 0;
    for (AttemptRecord a : job.pastAttempts) {
      attempts.add(
          attempt(
              job.request,
              a.attempt(),
              a.startMs(),
              a.endMs(),
              a.placement(),
              a.exitCode(),
              a.reason(),
              a.preemptedBy(),
              gpusOf));
      lastPast = a.attempt();
    }
    if (job.attempt > lastPast && !job.placement.isEmpty()) {
      attempts.add(
          attempt(
              job.request,
              job.attempt,
              job.startMs,
              Math.max(job.startMs, job.endMs),
              job.placement,
              job.exitCode,
              job.message,
              0,
              gpusOf));
    }
    return new AccountedJob(job, List.copyOf(attempts), recordJson(job));
  }

  private static Attempt attempt(
      JobRequest r,
      int number,
      long startMs,
      long endMs,
      List<TaskPlacement> placement,
      Integer exitCode,
      String reason,
      long preemptedBy,
      Function<String, List<GpuDevice>> gpusOf) {
    var byModel = new TreeMap<String, Integer>();
    var nodes = new ArrayList<String>();
    for (TaskPlacement t : placement) {
      nodes.add(t.node());
      List<GpuDevice> devices = gpusOf.apply(t.node());
      for (int index : t.gpus()) {
        String model = modelOf(devices, index, r.gpuModel());
        byModel.merge(model, 1, Integer::sum);
      }
    }
    int tasks = placement.size();
    return new Attempt(
        number,
        startMs,
        endMs,
        nodes,
        byModel,
        r.cpus() * tasks,
        r.memoryMb() * tasks,
        exitCode,
        reason,
        preemptedBy);
  }

  private static String modelOf(List<GpuDevice> devices, int index, String asked) {
    if (devices != null) {
      for (GpuDevice d : devices) {
        if (d.index() == index && d.model() != null && !d.model().isBlank()) {
          return d.model();
        }
      }
    }
    return asked == null || asked.isEmpty() ? UNKNOWN_MODEL : asked;
  }

  /** The record as JSON, its env's values blanked (secrets stay out of a years-long store). */
  static String recordJson(JobRecord job) {
    ObjectNode tree = JSON.valueToTree(job);
    if (tree.get("request") instanceof ObjectNode request
        && request.get("env") instanceof ObjectNode env) {
      for (var field : env.properties()) {
        field.setValue(env.textNode(""));
      }
    }
    try {
      return JSON.writeValueAsString(tree);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A record written by {@link #recordJson}. */
  static JobRecord readRecord(String json) {
    try {
      return JSON.readValue(json, JobRecord.class);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** GPU-seconds of all attempts, by model. */
  Map<String, Double> gpuSecondsByModel() {
    var out = new TreeMap<String, Double>();
    for (Attempt a : attempts) {
      a.gpusByModel().forEach((m, n) -> out.merge(m, n * a.seconds(), Double::sum));
    }
    return out;
  }

  double gpuSeconds() {
    return attempts.stream().mapToDouble(a -> a.gpus() * a.seconds()).sum();
  }

  double cpuSeconds() {
    return attempts.stream().mapToDouble(a -> a.cpus() * a.seconds()).sum();
  }

  double memoryMbSeconds() {
    return attempts.stream().mapToDouble(a -> a.memoryMb() * a.seconds()).sum();
  }

  int preemptions() {
    int past = (int) attempts.stream().filter(a -> a.preemptedBy() != 0).count();
    return Math.max(past, job.preemptedAtSec.size());
  }
}

package io.kairos.control.k8s;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.control.k8s.KubeObjects.Container;
import io.kairos.control.k8s.KubeObjects.Node;
import io.kairos.control.k8s.KubeObjects.Pod;
import io.kairos.core.model.NodeSpec;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Reads GPUs, priority, gang and topology from Kubernetes objects.
 *
 * <p>A pod's GPUs follow Kubernetes' own request rule for an extended resource: per container the
 * limit (an extended resource's request defaults to, and must equal, its limit), else the request;
 * the pod needs the larger of the containers' sum and the largest init container. Example: two
 * containers with limits {@code nvidia.com/gpu: "4"} and {@code "2"}, an init container with 1: the
 * pod needs 6.
 */
public final class GpuDemand {
  public static final String GPU = "nvidia.com/gpu";
  public static final String GANG = "kairos.io/gang";
  public static final String GANG_SIZE = "kairos.io/gang-size";
  public static final String QUEUE = "kairos.io/queue";
  public static final String ZONE_LABEL = "topology.kubernetes.io/zone";
  public static final String BLOCK_LABEL = "kairos.io/block";
  public static final String RACK_LABEL = "kairos.io/rack";
  public static final String NVLINK_LABEL = "kairos.io/nvlink-domain-size";

  /** Set by NVIDIA GPU Feature Discovery. */
  public static final String MODEL_LABEL = "nvidia.com/gpu.product";

  public static final int MAX_GANG_SIZE = 4096;
  private static final Pattern COUNT = Pattern.compile("[0-9]{1,9}");

  private GpuDemand() {}

  /** The pod's identity and needs; {@code field} names the pod in errors ({@code Pod}). */
  public static PodInfo pod(Pod pod, String field) {
    if (pod == null) {
      throw new ExtenderInputException(
          field, field + " is required", "send the pod being scheduled");
    }
    var meta = pod.metadata();
    if (meta == null) {
      throw missing(field + ".metadata");
    }
    String name = required(meta.name(), field + ".metadata.name");
    String namespace =
        meta.namespace() == null || meta.namespace().isEmpty() ? "default" : meta.namespace();
    String uid = required(meta.uid(), field + ".metadata.uid");
    int gpus = 0;
    int priority = 0;
    if (pod.spec() != null) {
      gpus =
          Math.max(
              sum(pod.spec().containers(), field + ".spec.containers"),
              max(pod.spec().initContainers(), field + ".spec.initContainers"));
      priority = pod.spec().priority() == null ? 0 : pod.spec().priority();
    }
    Map<String, String> annotations = meta.annotationsOrEmpty();
    String gangName = annotations.get(GANG);
    if (gangName == null || gangName.isBlank()) {
      return new PodInfo(uid, namespace, name, gpus, priority, null, null);
    }
    String size = annotations.get(GANG_SIZE);
    if (size == null
        || !COUNT.matcher(size.trim()).matches()
        || Integer.parseInt(size.trim()) < 1
        || Integer.parseInt(size.trim()) > MAX_GANG_SIZE) {
      return new PodInfo(
          uid,
          namespace,
          name,
          gpus,
          priority,
          null,
          "pod "
              + namespace
              + "/"
              + name
              + " names gang '"
              + gangName
              + "' but annotation "
              + GANG_SIZE
              + " is "
              + (size == null ? "missing" : "'" + size + "'")
              + "; set it to the number of pods in the gang (1-"
              + MAX_GANG_SIZE
              + ")");
    }
    String queue = annotations.getOrDefault(QUEUE, "default");
    return new PodInfo(
        uid,
        namespace,
        name,
        gpus,
        priority,
        new PodInfo.Gang(namespace, gangName, Integer.parseInt(size.trim()), queue),
        null);
  }

  /** The node's GPUs and topology; {@code raw} is kept for the filter's answer. */
  public static KubeNode node(Node node, JsonNode raw, String field) {
    if (node == null || node.metadata() == null) {
      throw missing(field + ".metadata");
    }
    String name = required(node.metadata().name(), field + ".metadata.name");
    int gpus = 0;
    if (node.status() != null && node.status().allocatable() != null) {
      JsonNode q = node.status().allocatable().get(GPU);
      if (q != null) {
        // Placement tracks up to 64 GPUs a node; more is not a real node today.
        gpus = (int) Math.min(NodeSpec.MAX_GPUS, count(q, field + ".status.allocatable." + GPU));
      }
    }
    Map<String, String> labels = node.metadata().labelsOrEmpty();
    int nvlink = gpus;
    String nv = labels.get(NVLINK_LABEL);
    if (nv != null && COUNT.matcher(nv).matches()) {
      int size = Integer.parseInt(nv);
      if (size >= 1 && gpus % size == 0) {
        nvlink = size;
      }
    }
    return new KubeNode(
        name,
        gpus,
        labels.getOrDefault(MODEL_LABEL, "gpu"),
        labels.getOrDefault(ZONE_LABEL, ""),
        labels.getOrDefault(BLOCK_LABEL, ""),
        labels.getOrDefault(RACK_LABEL, ""),
        nvlink,
        raw);
  }

  /**
   * A whole-number quantity: {@code "8"} or {@code 8}. Extended resources such as GPUs cannot be
   * fractional, so {@code "500m"} or {@code "1.5"} is an error naming {@code field}.
   */
  static long count(JsonNode q, String field) {
    if (q.isIntegralNumber() && q.canConvertToInt() && q.asInt() >= 0) {
      return q.asInt();
    }
    if (q.isTextual() && COUNT.matcher(q.asText().trim()).matches()) {
      return Long.parseLong(q.asText().trim());
    }
    throw new ExtenderInputException(
        field, "'" + q + "' is not a whole number of GPUs", "send a quantity such as \"8\"");
  }

  private static int sum(List<Container> containers, String field) {
    long total = 0;
    for (int i = 0; containers != null && i < containers.size(); i++) {
      total += gpus(containers.get(i), field + "[" + i + "]");
    }
    return (int) Math.min(total, Integer.MAX_VALUE);
  }

  private static int max(List<Container> containers, String field) {
    long most = 0;
    for (int i = 0; containers != null && i < containers.size(); i++) {
      most = Math.max(most, gpus(containers.get(i), field + "[" + i + "]"));
    }
    return (int) Math.min(most, Integer.MAX_VALUE);
  }

  private static long gpus(Container c, String field) {
    if (c == null || c.resources() == null) {
      return 0;
    }
    var limits = c.resources().limits();
    if (limits != null && limits.get(GPU) != null) {
      return count(limits.get(GPU), field + ".resources.limits." + GPU);
    }
    var requests = c.resources().requests();
    if (requests != null && requests.get(GPU) != null) {
      return count(requests.get(GPU), field + ".resources.requests." + GPU);
    }
    return 0;
  }

  private static String required(String value, String field) {
    if (value == null || value.isEmpty()) {
      throw missing(field);
    }
    return value;
  }

  private static ExtenderInputException missing(String field) {
    return new ExtenderInputException(field, field + " is required", "send the whole object");
  }
}

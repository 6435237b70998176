package io.kairos.control.k8s;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Map;

/**
 * The parts of Kubernetes' {@code core/v1} objects the extender reads. Real payloads carry many
 * more fields (managed fields, probes, volumes, images, node info): every record here ignores what
 * it does not declare, unlike the API's own bodies. Resource quantities stay raw JSON ({@code "8"}
 * or {@code 8}) and are read by {@link GpuDemand}.
 */
public final class KubeObjects {
  private KubeObjects() {}

  @JsonIgnoreProperties(ignoreUnknown = true)
  public record ObjectMeta(
      String name,
      String namespace,
      String uid,
      Map<String, String> labels,
      Map<String, String> annotations) {
    public Map<String, String> labelsOrEmpty() {
      return labels == null ? Map.of() : labels;
    }

    public Map<String, String> annotationsOrEmpty() {
      return annotations == null ? Map.of() : annotations;
    }
  }

  @JsonIgnoreProperties(ignoreUnknown = true)
  public record ResourceRequirements(
      Map<String, JsonNode> limits, Map<String, JsonNode> requests) {}

  @JsonIgnoreProperties(ignoreUnknown = true)
  public record Container(String name, ResourceRequirements resources) {}

  @JsonIgnoreProperties(ignoreUnknown = true)
  public record PodSpec(
      List<Container> containers,
      List<Container> initContainers,
      Integer priority,
      String nodeName) {}

  @JsonIgnoreProperties(ignoreUnknown = true)
  public record PodStatus(String phase) {}

  /** A {@code v1.Pod}: metadata, the containers' resources, the priority, the phase. */
  @JsonIgnoreProperties(ignoreUnknown = true)
  public record Pod(ObjectMeta metadata, PodSpec spec, PodStatus status) {}

  @JsonIgnoreProperties(ignoreUnknown = true)
  public record PodList(List<Pod> items) {}

  @JsonIgnoreProperties(ignoreUnknown = true)
  public record NodeStatus(Map<String, JsonNode> allocatable, Map<String, JsonNode> capacity) {}

  /** A {@code v1.Node}: name, labels, allocatable GPUs. */
  @JsonIgnoreProperties(ignoreUnknown = true)
  public record Node(ObjectMeta metadata, NodeStatus status) {}

  /**
   * A {@code v1.NodeList} with its items kept as raw JSON: the filter answers with the very node
   * objects it was sent (kube-scheduler uses the returned objects), so nothing may be lost.
   */
  @JsonIgnoreProperties(ignoreUnknown = true)
  public record NodeList(List<JsonNode> items) {}
}

package io.kairos.control.k8s;

import com.fasterxml.jackson.annotation.JsonAlias;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.kairos.control.k8s.KubeObjects.NodeList;
import io.kairos.control.k8s.KubeObjects.Pod;
import java.util.List;
import java.util.Map;

/**
 * The wire types of {@code k8s.io/kube-scheduler/extender/v1} ({@code types.go}). The Go structs
 * carry no {@code json} tags, so their keys are the Go field names ({@code Pod}, {@code NodeNames},
 * {@code FailedNodes}); Go decodes keys case-insensitively, and so does {@link ExtenderJson}, which
 * also takes the lower-case keys of old extenders ({@code pod}, {@code nodenames}). Nil pointers
 * and maps are sent as {@code null}, as Go does.
 */
public final class ExtenderTypes {
  /** Scores run from 0 to 10 ({@code MinExtenderPriority}, {@code MaxExtenderPriority}). */
  public static final long MAX_EXTENDER_PRIORITY = 10;

  private ExtenderTypes() {}

  /**
   * The body of filter and prioritize: the pod and either the nodes or, with nodeCacheCapable,
   * their names.
   */
  public record ExtenderArgs(
      @JsonProperty("Pod") Pod pod,
      @JsonProperty("Nodes") NodeList nodes,
      @JsonProperty("NodeNames") List<String> nodeNames) {}

  /** The answer to filter: the nodes that pass (in the form they came), and why the others fail. */
  public record ExtenderFilterResult(
      @JsonProperty("Nodes") NodeList nodes,
      @JsonProperty("NodeNames") List<String> nodeNames,
      @JsonProperty("FailedNodes") Map<String, String> failedNodes,
      @JsonProperty("FailedAndUnresolvableNodes") Map<String, String> failedAndUnresolvableNodes,
      @JsonProperty("Error") String error) {}

  /** One entry of prioritize's answer (a {@code HostPriorityList} is a JSON array of these). */
  public record HostPriority(
      @JsonProperty("Host") String host, @JsonProperty("Score") long score) {}

  public record ExtenderBindingArgs(
      @JsonProperty("PodName") String podName,
      @JsonProperty("PodNamespace") String podNamespace,
      @JsonProperty("PodUID") String podUid,
      @JsonProperty("Node") String node) {}

  public record ExtenderBindingResult(@JsonProperty("Error") String error) {}

  public record Victims(
      @JsonProperty("Pods") List<Pod> pods,
      @JsonProperty("NumPDBViolations") long numPdbViolations) {}

  public record MetaPod(@JsonProperty("UID") String uid) {}

  public record MetaVictims(
      @JsonProperty("Pods") List<MetaPod> pods,
      @JsonProperty("NumPDBViolations") long numPdbViolations) {}

  /** Victims per node: full pods, or with nodeCacheCapable only their UIDs. */
  public record ExtenderPreemptionArgs(
      @JsonProperty("Pod") Pod pod,
      @JsonProperty("NodeNameToVictims") @JsonAlias("nodeToVictims")
          Map<String, Victims> nodeNameToVictims,
      @JsonProperty("NodeNameToMetaVictims") Map<String, MetaVictims> nodeNameToMetaVictims) {}

  public record ExtenderPreemptionResult(
      @JsonProperty("NodeNameToMetaVictims") Map<String, MetaVictims> nodeNameToMetaVictims) {}
}

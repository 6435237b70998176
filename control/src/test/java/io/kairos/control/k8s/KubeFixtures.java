package io.kairos.control.k8s;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.Map;

/**
 * Real-shaped {@code v1.Node} and {@code v1.Pod} objects from {@code src/test/resources/k8s/},
 * renamed per test so tests sharing a controller do not share nodes or pods.
 */
final class KubeFixtures {
  static final ObjectMapper JSON = new ObjectMapper();

  private KubeFixtures() {}

  static ObjectNode load(String file) {
    try (InputStream in = KubeFixtures.class.getResourceAsStream("/k8s/" + file)) {
      return (ObjectNode) JSON.readTree(in);
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  /** An 8-GPU DGX H100 node. */
  static ObjectNode dgx(String name) {
    return renamed(load("node-dgx-h100.json"), name);
  }

  /** A 4-GPU L4 node. */
  static ObjectNode l4(String name) {
    return renamed(load("node-4gpu-l4.json"), name);
  }

  static ObjectNode cpu(String name) {
    return renamed(load("node-cpu.json"), name);
  }

  private static ObjectNode renamed(ObjectNode node, String name) {
    ((ObjectNode) node.get("metadata")).put("name", name);
    ((ObjectNode) node.at("/metadata/labels")).put("kubernetes.io/hostname", name);
    return node;
  }

  /** The 1-GPU notebook pod, renamed, asking for {@code gpus} GPUs at {@code priority}. */
  static ObjectNode pod(String name, int gpus, int priority) {
    ObjectNode pod = load("pod-1gpu.json");
    setIdentity(pod, name);
    ObjectNode resources = (ObjectNode) pod.at("/spec/containers/0/resources");
    ((ObjectNode) resources.get("limits")).put("nvidia.com/gpu", Integer.toString(gpus));
    ((ObjectNode) resources.get("requests")).put("nvidia.com/gpu", Integer.toString(gpus));
    ((ObjectNode) pod.get("spec")).put("priority", priority);
    return pod;
  }

  /** A worker of an 8-GPU-per-pod gang ({@code kairos.io/gang}, {@code gang-size}). */
  static ObjectNode gangPod(String name, String gang, int size) {
    ObjectNode pod = load("pod-gang-8gpu.json");
    setIdentity(pod, name);
    ObjectNode annotations = (ObjectNode) pod.at("/metadata/annotations");
    annotations.put("kairos.io/gang", gang);
    annotations.put("kairos.io/gang-size", Integer.toString(size));
    return pod;
  }

  static String uid(ObjectNode pod) {
    return pod.at("/metadata/uid").asText();
  }

  private static void setIdentity(ObjectNode pod, String name) {
    ObjectNode meta = (ObjectNode) pod.get("metadata");
    meta.put("name", name);
    meta.put("uid", "uid-" + name);
  }

  /** {@code ExtenderArgs} with whole nodes (nodeCacheCapable: false). */
  static String args(ObjectNode pod, ObjectNode... nodes) {
    ObjectNode args = JSON.createObjectNode();
    args.set("Pod", pod);
    ObjectNode list = args.putObject("Nodes");
    list.putObject("metadata");
    ArrayNode items = list.putArray("items");
    for (ObjectNode n : nodes) {
      items.add(n);
    }
    args.putNull("NodeNames");
    return args.toString();
  }

  /** {@code ExtenderArgs} with node names (nodeCacheCapable: true). */
  static String argsByName(ObjectNode pod, String... names) {
    ObjectNode args = JSON.createObjectNode();
    args.set("Pod", pod);
    args.putNull("Nodes");
    ArrayNode list = args.putArray("NodeNames");
    for (String n : names) {
      list.add(n);
    }
    return args.toString();
  }

  static String binding(ObjectNode pod, String node) {
    return JSON.valueToTree(
            Map.of(
                "PodName", pod.at("/metadata/name").asText(),
                "PodNamespace", pod.at("/metadata/namespace").asText(),
                "PodUID", uid(pod),
                "Node", node))
        .toString();
  }

  static JsonNode tree(String json) {
    try {
      return JSON.readTree(json);
    } catch (IOException e) {
      throw new AssertionError(json, e);
    }
  }

  static List<String> names(JsonNode filterResult) {
    var out = new java.util.ArrayList<String>();
    if (filterResult.path("NodeNames").isArray()) {
      filterResult.path("NodeNames").forEach(n -> out.add(n.asText()));
    } else {
      filterResult
          .path("Nodes")
          .path("items")
          .forEach(n -> out.add(n.at("/metadata/name").asText()));
    }
    return out;
  }
}

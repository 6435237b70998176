package io.kairos.control.k8s;

import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.control.k8s.ExtenderTypes.ExtenderFilterResult;
import io.kairos.control.k8s.KubeObjects.Node;
import io.kairos.control.k8s.KubeObjects.NodeList;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The candidate nodes of a filter or prioritize call, by name in the order kube-scheduler sent
 * them; a null value is a node Kairos does not know. {@code full}: they came as whole {@code
 * v1.Node}s (not {@code nodeCacheCapable}), so a filter answers with whole nodes too.
 */
record Candidates(LinkedHashMap<String, KubeNode> byName, boolean full) {
  /** Parses whole nodes ({@code Nodes.items}); a bad one is bad input naming its field. */
  static Candidates ofNodes(List<JsonNode> items) {
    var parsed = new LinkedHashMap<String, KubeNode>();
    for (int i = 0; i < items.size(); i++) {
      String field = "Nodes.items[" + i + "]";
      Node n;
      try {
        n = ExtenderJson.MAPPER.treeToValue(items.get(i), Node.class);
      } catch (IOException | IllegalArgumentException e) {
        throw new ExtenderInputException(
            field + pathOf(e),
            "not a v1.Node: " + firstLine(e.getMessage()),
            "send v1.Node objects in Nodes.items");
      }
      KubeNode node = GpuDemand.node(n, items.get(i), field);
      parsed.put(node.name(), node);
    }
    return new Candidates(parsed, true);
  }

  List<String> names() {
    return List.copyOf(byName.keySet());
  }

  KubeNode node(String name) {
    return byName.get(name);
  }

  /** A filter's answer: the nodes that pass, in the form they were sent, and why others fail. */
  ExtenderFilterResult answer(
      List<String> pass, Map<String, String> failed, Map<String, String> unresolvable) {
    if (full) {
      var items = new ArrayList<JsonNode>(pass.size());
      pass.forEach(n -> items.add(byName.get(n).raw()));
      return new ExtenderFilterResult(new NodeList(items), null, failed, unresolvable, "");
    }
    return new ExtenderFilterResult(null, List.copyOf(pass), failed, unresolvable, "");
  }

  /** ".status.allocatable" for an error inside a node object, from Jackson's path. */
  private static String pathOf(Exception e) {
    var sb = new StringBuilder();
    if (e instanceof JsonMappingException m) {
      for (var ref : m.getPath()) {
        if (ref.getFieldName() != null) {
          sb.append('.').append(ref.getFieldName());
        } else if (ref.getIndex() >= 0) {
          sb.append('[').append(ref.getIndex()).append(']');
        }
      }
    }
    return sb.toString();
  }

  private static String firstLine(String s) {
    if (s == null) {
      return "";
    }
    int nl = s.indexOf('\n');
    return nl < 0 ? s : s.substring(0, nl);
  }
}

package io.kairos.control.k8s;

import java.util.Objects;

/**
 * What the extender keeps of a pod: identity, the GPUs it needs, its priority ({@code
 * spec.priority}, 0 when unset) and its gang, if it names one.
 *
 * @param gang the gang from the pod's annotations, or null
 * @param gangProblem why the gang annotations are unusable (a pod naming a gang without a valid
 *     size), or null
 */
public record PodInfo(
    String uid,
    String namespace,
    String name,
    int gpus,
    int priority,
    Gang gang,
    String gangProblem) {
  /** A gang: {@code kairos.io/gang} pods of one namespace, {@code kairos.io/gang-size} of them. */
  public record Gang(String namespace, String name, int size, String queue) {
    public String key() {
      return namespace + "/" + name;
    }
  }

  public PodInfo {
    Objects.requireNonNull(uid, "uid");
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(name, "name");
  }

  public String key() {
    return namespace + "/" + name;
  }
}

package io.kairos.core.tenancy;

import java.util.Objects;

/**
 * A named priority that queues give their jobs by default. Checked by {@link TenancyConfig}.
 *
 * @param name unique, referenced from queue defaults
 * @param value higher runs first and may preempt lower
 * @param preemptible whether jobs of this class may be preempted at all
 */
public record PriorityClass(String name, int value, boolean preemptible) {
  public PriorityClass {
    Objects.requireNonNull(name, "priorityClass.name");
  }
}

package io.kairos.core.sched;

import io.kairos.core.model.GangSpec;
import io.kairos.core.model.TaskShape;
import java.util.HashMap;

/**
 * Remembers, within one pass, gangs that did not fit, so that jobs that cannot fit either are
 * not placed again.
 *
 * <p>A failure of {@code k} tasks of one shape (task shape and distinct-nodes flag) under the
 * first {@code p} reservations implies failure for {@code k' >= k} tasks of that shape under
 * {@code p' >= p} reservations, as long as the ledger has not changed: placement succeeds
 * exactly when the usable tasks add up to the gang, and more tasks or more reservations only
 * make that harder. One entry per shape: the most recent failure.
 */
final class FailureMemo {
  private record Entry(int version, int prefix, int tasks) {}

  private final HashMap<TaskShape, Entry> packed = new HashMap<>();
  private final HashMap<TaskShape, Entry> distinct = new HashMap<>();

  boolean knownToFail(GangSpec gang, int prefix, int version) {
    Entry e = (gang.distinctNodes() ? distinct : packed).get(gang.shape());
    return e != null && e.version == version && e.prefix <= prefix && e.tasks <= gang.tasks();
  }

  void record(GangSpec gang, int prefix, int version) {
    (gang.distinctNodes() ? distinct : packed)
        .put(gang.shape(), new Entry(version, prefix, gang.tasks()));
  }
}

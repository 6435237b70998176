package io.kairos.protocol;

import java.util.List;

/**
 * The answer to {@code POST /api/v1/config}: what the document changes against the version in
 * force, and whether it was applied.
 *
 * @param fromVersion the version it was compared with (0: none)
 * @param version the version in force afterwards: {@code fromVersion + 1} when applied
 * @param changed whether the document differs from the one in force
 * @param applied whether it is now in force (false for a dry run or an unchanged document)
 * @param diff a unified diff of the documents, empty when unchanged
 * @param queuesAdded queues the new document has and the old one did not
 * @param queuesRemoved queues the old document had and the new one does not
 * @param liveJobsInRemovedQueues pending and running jobs in the removed queues (the apply is
 *     refused while there are any, unless forced)
 */
public record ConfigChange(
    long fromVersion,
    long version,
    boolean changed,
    boolean applied,
    String diff,
    List<String> queuesAdded,
    List<String> queuesRemoved,
    long liveJobsInRemovedQueues) {
  public ConfigChange {
    queuesAdded = List.copyOf(queuesAdded);
    queuesRemoved = List.copyOf(queuesRemoved);
  }
}

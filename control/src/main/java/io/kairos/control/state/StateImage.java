package io.kairos.control.state;

import java.util.List;

/**
 * The replicated state as written to a snapshot: the records only (the store is derived).
 *
 * @param users the user table, by name; empty (and left out of the snapshot) when no admin has set
 *     a row, so snapshots from before the table read and write the same bytes
 * @param limits null until limits are set (and in snapshots written before they existed)
 * @param configs the replicated configuration's kept versions, oldest first; empty (and left out of
 *     the snapshot) until one is applied
 */
public record StateImage(
    int version,
    long nextJobId,
    long nextEpoch,
    List<JobRecord> jobs,
    List<NodeRecord> nodes,
    List<TokenRecord> tokens,
    List<UserRecord> users,
    Limits limits,
    List<ConfigVersion> configs) {
  public static final int VERSION = 1;

  public StateImage {
    users = users == null ? List.of() : List.copyOf(users);
    configs = configs == null ? List.of() : List.copyOf(configs);
  }

  /** An image without a user table or limits (snapshots from before them). */
  public StateImage(
      int version,
      long nextJobId,
      long nextEpoch,
      List<JobRecord> jobs,
      List<NodeRecord> nodes,
      List<TokenRecord> tokens) {
    this(version, nextJobId, nextEpoch, jobs, nodes, tokens, List.of(), null, List.of());
  }
}

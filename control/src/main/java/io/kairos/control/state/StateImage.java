package io.kairos.control.state;

import java.util.List;

/**
 * The replicated state as written to a snapshot: the records only (the store is derived).
 *
 * @param limits null until limits are set (and in snapshots written before they existed)
 */
public record StateImage(
    int version,
    long nextJobId,
    long nextEpoch,
    List<JobRecord> jobs,
    List<NodeRecord> nodes,
    List<TokenRecord> tokens,
    Limits limits) {
  public static final int VERSION = 1;

  public StateImage(
      int version,
      long nextJobId,
      long nextEpoch,
      List<JobRecord> jobs,
      List<NodeRecord> nodes,
      List<TokenRecord> tokens) {
    this(version, nextJobId, nextEpoch, jobs, nodes, tokens, null);
  }
}

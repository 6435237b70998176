package io.kairos.control.state;

import java.util.List;

/** The replicated state as written to a snapshot: the records only (the store is derived). */
public record StateImage(
    int version,
    long nextJobId,
    long nextEpoch,
    List<JobRecord> jobs,
    List<NodeRecord> nodes,
    List<TokenRecord> tokens) {
  public static final int VERSION = 1;
}

package io.kairos.core.sched.place;

/** How a gang's nodes are chosen. */
public enum PlacementStrategy {
  /**
   * The lowest topology domain that holds the gang (node, rack, block, zone, cluster), best fit
   * inside it: Kairos' placement.
   */
  TOPOLOGY,
  /**
   * Nodes in index order, each taking as many tasks as it can: the classic first fit, blind to
   * topology. For measuring what topology-aware placement is worth (simulator, comm model).
   */
  FIRST_FIT
}

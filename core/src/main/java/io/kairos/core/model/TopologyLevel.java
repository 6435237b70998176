package io.kairos.core.model;

/**
 * Topology levels from the innermost to the outermost. A gang placed inside a lower level
 * communicates faster; placement prefers the lowest level that holds the whole gang.
 */
public enum TopologyLevel {
  /** GPUs joined by NVLink inside one node. */
  NVLINK,
  /** One node (GPUs may span NVLink domains, over PCIe). */
  NODE,
  /** Nodes under one top-of-rack switch. */
  RACK,
  /** Racks under one spine (a "block" or scalable unit). */
  BLOCK,
  /** Blocks in one zone (one fabric). */
  ZONE,
  /** The whole cluster (across zones). */
  CLUSTER
}

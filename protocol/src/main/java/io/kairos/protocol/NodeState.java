package io.kairos.protocol;

/** UP takes new work; DRAINED runs what it has and takes nothing new; DOWN lost its agent. */
public enum NodeState {
  UP,
  DRAINED,
  DOWN
}

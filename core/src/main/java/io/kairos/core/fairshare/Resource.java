package io.kairos.core.fairshare;

/**
 * A resource whose use is charged to accounts. Usage is kept in resource-seconds: GPU-seconds,
 * CPU-seconds and memory-byte-seconds. The ordinal is the index into per-resource arrays.
 */
public enum Resource {
  GPU,
  CPU,
  MEMORY;

  /** All values, shared so hot loops do not clone {@code values()}. Never modified. */
  static final Resource[] ALL = values();

  static final int COUNT = ALL.length;
}

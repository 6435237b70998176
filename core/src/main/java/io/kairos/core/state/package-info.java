/**
 * Cluster state: {@link io.kairos.core.state.ClusterStore}, the single-writer authoritative state
 * that only {@link io.kairos.core.state.Reducer} mutates, and {@link
 * io.kairos.core.state.ClusterSnapshot}, the read-only view a scheduling pass reads.
 */
package io.kairos.core.state;

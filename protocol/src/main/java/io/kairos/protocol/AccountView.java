package io.kairos.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * A fair-share account ({@code GET /api/v1/accounts}), with a tenancy configuration that has
 * accounts.
 *
 * @param parent its parent account, "root" for a top-level one
 * @param shares its weight among its siblings
 * @param normalizedShare its share of the whole cluster, 0 to 1
 * @param gpuHours its decayed GPU usage (its subtree's included), in GPU-hours; absent when the
 *     answering replica is not the leader (the leader keeps the usage)
 * @param factor its fair-share factor, 0 to 1 (1: used nothing); absent as {@code gpuHours}
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record AccountView(
    String name,
    String parent,
    long shares,
    double normalizedShare,
    Double gpuHours,
    Double factor) {}

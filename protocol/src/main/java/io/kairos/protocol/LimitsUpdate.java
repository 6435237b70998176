package io.kairos.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.Map;

/**
 * {@code PUT /api/v1/limits} (admins): the limits to change; a field left out keeps its value. In
 * {@code perUser}, a user's object replaces that user's overrides and {@code null} removes them.
 * With {@code reset}, the controller's heap defaults (and no overrides) are the starting point.
 * Also how {@link LimitsView#defaults} is shown.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record LimitsUpdate(
    Long maxJobsPerUser,
    Long maxLiveJobs,
    Long maxEndedJobs,
    Long maxJobBytes,
    Double submitsPerSec,
    Long submitBurst,
    Map<String, LimitsView.UserLimits> perUser,
    Boolean reset) {}

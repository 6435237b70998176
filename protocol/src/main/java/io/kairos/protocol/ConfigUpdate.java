package io.kairos.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * {@code POST /api/v1/config} (admins): a whole new configuration document, validated whole.
 *
 * @param yaml the tenancy document (docs/tenancy.md); required
 * @param expectedVersion the version the caller's diff was made against; the change is refused
 *     (409) if another was applied since. Absent: whatever version is current
 * @param dryRun validate and diff only, change nothing
 * @param force apply even if queues that live jobs are in go away (pending ones then wait with the
 *     reason "unknown queue")
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ConfigUpdate(String yaml, Long expectedVersion, Boolean dryRun, Boolean force) {}

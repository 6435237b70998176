package io.kairos.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * {@code GET /api/v1/config} (admins): the site configuration in force (docs/tenancy.md), and one
 * entry of {@code GET /api/v1/config/history} (without {@code yaml}).
 *
 * @param version the replicated version; 0 when none was applied
 * @param source {@code replicated} (applied through the log), {@code startup} (the file this
 *     replica was started with, before any version was applied) or {@code none}
 * @param yaml the document; absent in the history, and for a startup configuration built in code
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ConfigView(
    long version, String source, String sha256, String appliedAt, String by, String yaml) {}

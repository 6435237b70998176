package io.kairos.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * An error reply, {@code application/problem+json} (RFC 9457), with Kairos' additions: the
 * offending {@code field} and how to {@code fix} it. A 500 carries a {@code correlationId} that the
 * server's log also names.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Problem(
    String type,
    String title,
    int status,
    String detail,
    String field,
    String fix,
    String correlationId) {}

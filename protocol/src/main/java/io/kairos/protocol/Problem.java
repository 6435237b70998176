package io.kairos.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * An error reply, {@code application/problem+json} (RFC 9457), with Kairos' additions: the
 * offending {@code field} and how to {@code fix} it. A 500 carries a {@code correlationId} that the
 * server's log also names.
 *
 * @param limit the limit that refused the request (a 429, or a 413 for one job too large), e.g.
 *     {@code maxJobsPerUser}; absent otherwise
 * @param limitValue that limit's value, e.g. 4000; absent otherwise
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Problem(
    String type,
    String title,
    int status,
    String detail,
    String field,
    String fix,
    String correlationId,
    String limit,
    Number limitValue) {
  public Problem(
      String type,
      String title,
      int status,
      String detail,
      String field,
      String fix,
      String correlationId) {
    this(type, title, status, detail, field, fix, correlationId, null, null);
  }
}

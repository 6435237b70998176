package io.kairos.control.api;

/**
 * An error the client caused or must handle, answered as {@code application/problem+json}: the
 * status, a short title, the detail, and where it applies the offending field and the fix. A limit
 * that refused the request is named with its value, and {@link #retryAfterSec} (when positive)
 * becomes the {@code Retry-After} header.
 */
public final class ApiError extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final int status;
  private final String title;
  private final String field;
  private final String fix;
  private final String limit;
  private final Number limitValue;
  private final long retryAfterSec;

  public ApiError(int status, String title, String detail, String field, String fix) {
    this(status, title, detail, field, fix, null, null, 0);
  }

  private ApiError(
      int status,
      String title,
      String detail,
      String field,
      String fix,
      String limit,
      Number limitValue,
      long retryAfterSec) {
    super(detail, null, false, false);
    this.status = status;
    this.title = title;
    this.field = field;
    this.fix = fix;
    this.limit = limit;
    this.limitValue = limitValue;
    this.retryAfterSec = retryAfterSec;
  }

  public static ApiError invalid(String field, String detail, String fix) {
    return new ApiError(400, "Invalid request", detail, field, fix);
  }

  public static ApiError notFound(String detail) {
    return new ApiError(404, "Not found", detail, null, null);
  }

  public static ApiError conflict(String detail) {
    return new ApiError(409, "Conflict", detail, null, null);
  }

  public static ApiError unauthorized(String detail) {
    return new ApiError(
        401,
        "Unauthorized",
        detail,
        null,
        "send 'Authorization: Bearer <token>'; the admin token is in the controller's"
            + " DATA/admin.token, and 'kairos token create' makes more");
  }

  public static ApiError forbidden(String detail) {
    return new ApiError(403, "Forbidden", detail, null, null);
  }

  public static ApiError unavailable(String detail) {
    return new ApiError(503, "Unavailable", detail, null, "retry in a moment");
  }

  /** 429: the request would pass {@code limit}, whose value is {@code value}. */
  public static ApiError overLimit(
      String limit, Number value, String detail, String fix, long retryAfterSec) {
    return new ApiError(
        429, "Limit reached", detail, null, fix, limit, value, Math.max(1, retryAfterSec));
  }

  /**
   * 413: the request is larger than {@code limit} allows ({@code maxJobBytes} for one job, {@code
   * submitBurst} for a whole submit); {@code field} names the offending part, if one.
   */
  public static ApiError tooLarge(
      String title, String field, String limit, long value, String detail, String fix) {
    return new ApiError(413, title, detail, field, fix, limit, value, 0);
  }

  /** The same error, telling the client to retry after {@code seconds}. */
  public ApiError retryAfter(long seconds) {
    return new ApiError(
        status, title, getMessage(), field, fix, limit, limitValue, Math.max(1, seconds));
  }

  public int status() {
    return status;
  }

  public String title() {
    return title;
  }

  public String field() {
    return field;
  }

  public String fix() {
    return fix;
  }

  /** The limit that refused the request, or null. */
  public String limit() {
    return limit;
  }

  /** The limit's value, or null. */
  public Number limitValue() {
    return limitValue;
  }

  /** Seconds for {@code Retry-After}; 0 for none. */
  public long retryAfterSec() {
    return retryAfterSec;
  }
}

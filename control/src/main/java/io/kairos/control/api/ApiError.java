package io.kairos.control.api;

/**
 * An error the client caused or must handle, answered as {@code application/problem+json}: the
 * status, a short title, the detail, and where it applies the offending field and the fix.
 */
public final class ApiError extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final int status;
  private final String title;
  private final String field;
  private final String fix;

  public ApiError(int status, String title, String detail, String field, String fix) {
    super(detail, null, false, false);
    this.status = status;
    this.title = title;
    this.field = field;
    this.fix = fix;
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
}

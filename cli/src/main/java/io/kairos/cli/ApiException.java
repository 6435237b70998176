package io.kairos.cli;

import io.kairos.protocol.Problem;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A request that did not succeed: the controller could not be reached, or it answered with an error
 * (a {@link Problem}). The message is the one line the CLI prints after {@code kairos: }; {@link
 * #exitCode} is 2 when the server says the input was bad (400, 422), 1 otherwise.
 */
final class ApiException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** The HTTP status, or 0 when no reply came. */
  private final int status;

  private ApiException(String message, int status) {
    super(message);
    this.status = status;
  }

  int status() {
    return status;
  }

  /** True when no controller answered at all (no point trying the next job id). */
  boolean isUnreachable() {
    return status == 0;
  }

  int exitCode() {
    return status == 400 || status == 422 ? 2 : 1;
  }

  static ApiException unreachable(List<URI> servers) {
    String where = servers.stream().map(URI::toString).collect(Collectors.joining(", "));
    return new ApiException("no controller at " + where + ": start one with `./kairos up`", 0);
  }

  static ApiException noReply(String message) {
    return new ApiException(message, 0);
  }

  /** A reply that is not what the API promises (not JSON, wrong shape). */
  static ApiException unexpected(String message) {
    return new ApiException(message, 1);
  }

  /**
   * An error reply as one line: {@code <detail> (field: x; fix: y)}. The problem may be null (the
   * body was not problem JSON); then {@code text} (the body, possibly empty) is shown.
   *
   * @param sentToken whether the request carried a token (a 401 without one gets a fix)
   */
  static ApiException of(int status, Problem problem, String text, URI uri, boolean sentToken) {
    String what;
    var notes = new ArrayList<String>();
    if (problem != null && (problem.detail() != null || problem.title() != null)) {
      what = problem.detail() != null ? problem.detail() : problem.title();
      if (problem.field() != null) {
        notes.add("field: " + problem.field());
      }
      if (problem.fix() != null) {
        notes.add("fix: " + problem.fix());
      }
      if (problem.correlationId() != null) {
        notes.add("correlation id: " + problem.correlationId());
      }
    } else {
      String first = text == null ? "" : text.strip().lines().findFirst().orElse("");
      if (first.length() > 200) {
        first = first.substring(0, 200) + "...";
      }
      what = "HTTP " + status + " from " + uri + (first.isEmpty() ? "" : ": " + first);
    }
    if (status == 401 && !sentToken && notes.stream().noneMatch(n -> n.startsWith("fix:"))) {
      notes.add(
          "fix: pass --token or set KAIROS_TOKEN (the local controller's admin token is in"
              + " $KAIROS_DATA/admin.token, ~/.kairos by default)");
    }
    String line = notes.isEmpty() ? what : what + " (" + String.join("; ", notes) + ")";
    return new ApiException(line.replace('\n', ' '), status);
  }
}

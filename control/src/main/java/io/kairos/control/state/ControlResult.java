package io.kairos.control.state;

import java.util.List;

/**
 * What applying one command did, returned to whoever proposed it. {@code status} follows HTTP: 200
 * done, 404 no such job or node, 409 the state does not allow it (already finished).
 *
 * @param ids new job ids (submit), or the epoch (register) as a single element
 */
public record ControlResult(int status, String error, List<Long> ids) {
  public static final ControlResult OK = new ControlResult(200, null, List.of());

  public static ControlResult ok(List<Long> ids) {
    return new ControlResult(200, null, List.copyOf(ids));
  }

  public static ControlResult notFound(String error) {
    return new ControlResult(404, error, List.of());
  }

  public static ControlResult conflict(String error) {
    return new ControlResult(409, error, List.of());
  }

  public boolean isOk() {
    return status == 200;
  }
}

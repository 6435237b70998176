package io.kairos.control.state;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * What applying one command did, returned to whoever proposed it. {@code status} follows HTTP: 200
 * done, 404 no such job or node, 409 the state does not allow it (already finished).
 *
 * @param ids new job ids (submit: of the groups admitted, in order), or the epoch (register) as a
 *     single element
 * @param refused the submit's groups that a limit refused (they made no jobs); absent when none
 * @param items a command that carries several ({@link ControlCommand.RegisterNodes}): what each
 *     answered, in order (the command itself is then 200); absent for the others
 */
public record ControlResult(
    int status,
    String error,
    List<Long> ids,
    @JsonInclude(JsonInclude.Include.NON_EMPTY) List<Refusal> refused,
    @JsonInclude(JsonInclude.Include.NON_EMPTY) List<ControlResult> items) {
  public static final ControlResult OK = new ControlResult(200, null, List.of());

  /**
   * A group of a submit that a limit refused as a whole.
   *
   * @param group its index in the command's groups
   * @param limit the limit's name: {@code maxJobsPerUser} or {@code maxLiveJobs}
   * @param value the limit's value
   * @param user the user it applies to ({@code maxJobsPerUser}), else null
   * @param used what counted against it before the submit
   * @param asked what the submit would have added
   */
  public record Refusal(int group, String limit, long value, String user, long used, long asked) {}

  public ControlResult {
    ids = ids == null ? List.of() : List.copyOf(ids);
    refused = refused == null ? List.of() : List.copyOf(refused);
    items = items == null ? List.of() : List.copyOf(items);
  }

  public ControlResult(int status, String error, List<Long> ids, List<Refusal> refused) {
    this(status, error, ids, refused, List.of());
  }

  public ControlResult(int status, String error, List<Long> ids) {
    this(status, error, ids, List.of());
  }

  /** The answer of a command that carries several: each one's, in order. */
  public static ControlResult ofItems(List<ControlResult> items) {
    return new ControlResult(200, null, List.of(), List.of(), items);
  }

  public static ControlResult ok(List<Long> ids) {
    return new ControlResult(200, null, ids);
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

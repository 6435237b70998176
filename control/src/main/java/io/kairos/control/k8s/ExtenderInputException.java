package io.kairos.control.k8s;

/**
 * A request kube-scheduler (or whoever calls the extender) got wrong: the field, what is wrong, and
 * the fix. The routes answer it as a 400 problem.
 */
public final class ExtenderInputException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final String field;
  private final String fix;

  public ExtenderInputException(String field, String detail, String fix) {
    super(detail, null, false, false);
    this.field = field;
    this.fix = fix;
  }

  public String field() {
    return field;
  }

  public String fix() {
    return fix;
  }
}

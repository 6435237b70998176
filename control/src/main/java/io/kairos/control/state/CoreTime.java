package io.kairos.control.state;

/**
 * The one place where the controller's time meets the core's. The controller counts epoch
 * milliseconds (names end in {@code Ms}); the core counts epoch seconds ({@code Sec}). Every
 * conversion between them goes through here.
 *
 * <p>The rule: <b>an instant is the second it falls in</b> ({@link #sec}, rounded down: a job
 * submitted or started at 12.3 s did so in second 12, and "now" at 12.3 s is second 12), and <b>a
 * lower bound is the first whole second not before it</b> ({@link #notBeforeSec}, rounded up: a job
 * held until 12.3 s must not start at 12 s). With both, comparing a bound with "now" in seconds
 * never lets something happen before its bound in milliseconds: at 12.9 s "now" is 12, and a bound
 * of 12.3 s is 13. Rounding down is toward negative infinity, so times before 1970 would round the
 * same way; they do not occur.
 */
public final class CoreTime {
  private static final long MS_PER_SEC = 1000;

  private CoreTime() {}

  /** The core's second for an instant in epoch millis: the second it falls in (rounded down). */
  public static long sec(long epochMs) {
    return Math.floorDiv(epochMs, MS_PER_SEC);
  }

  /**
   * The core's second for a "not before" bound in epoch millis: the first whole second at or after
   * it (rounded up), so the core never acts before the bound.
   */
  public static long notBeforeSec(long epochMs) {
    return Math.floorDiv(epochMs + MS_PER_SEC - 1, MS_PER_SEC);
  }

  /** Milliseconds in a span of whole seconds (a core or configuration duration). */
  public static long ms(long seconds) {
    return seconds * MS_PER_SEC;
  }
}

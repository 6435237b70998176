package io.kairos.control.state;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * A job array as submitted (Slurm's {@code --array}): the task ids, ascending and distinct, and how
 * many elements may run at once. It lives only in the log entry of the submit; each element becomes
 * a job of its own with an {@link ArrayElement}.
 *
 * @param taskIds ascending, distinct, each in 0..{@value #MAX_TASK_ID}
 * @param limit at most this many elements are queued or running at once; 0 for no limit
 */
public record JobArray(List<Integer> taskIds, int limit) {
  public static final int MAX_ELEMENTS = 10_000;
  public static final int MAX_TASK_ID = 4_000_000;
  private static final Pattern ITEM = Pattern.compile("(\\d{1,9})(?:-(\\d{1,9})(?::(\\d{1,9}))?)?");

  public JobArray {
    taskIds = List.copyOf(taskIds);
    if (taskIds.isEmpty() || taskIds.size() > MAX_ELEMENTS || limit < 0) {
      throw new IllegalArgumentException("an array holds 1 to " + MAX_ELEMENTS + " elements");
    }
  }

  public int min() {
    return taskIds.getFirst();
  }

  public int max() {
    return taskIds.getLast();
  }

  /**
   * Parses Slurm's forms: "0-15", "1,3,5-7", "0-20:2" (a step), each optionally ending in "%4" (at
   * most 4 elements at once). Repeated indexes count once.
   *
   * @throws IllegalArgumentException with a message for people
   */
  public static JobArray parse(String text) {
    String t = text.strip();
    int limit = 0;
    int percent = t.indexOf('%');
    if (percent >= 0) {
      String l = t.substring(percent + 1);
      if (!l.matches("\\d{1,6}") || Integer.parseInt(l) < 1 || Integer.parseInt(l) > MAX_ELEMENTS) {
        throw new IllegalArgumentException(
            "the limit after '%' must be a number from 1 to " + MAX_ELEMENTS + ", got '" + l + "'");
      }
      limit = Integer.parseInt(l);
      t = t.substring(0, percent);
    }
    if (t.isEmpty()) {
      throw new IllegalArgumentException("no indexes given");
    }
    var ids = new TreeSet<Integer>();
    for (String item : t.split(",", -1)) {
      var m = ITEM.matcher(item.strip());
      if (!m.matches()) {
        throw new IllegalArgumentException(
            "'" + item + "' is not an index, a range A-B or A-B:STEP");
      }
      long from = Long.parseLong(m.group(1));
      long to = m.group(2) == null ? from : Long.parseLong(m.group(2));
      long step = m.group(3) == null ? 1 : Long.parseLong(m.group(3));
      if (to > MAX_TASK_ID) {
        throw new IllegalArgumentException("indexes go from 0 to " + MAX_TASK_ID + ", got " + to);
      }
      if (to < from) {
        throw new IllegalArgumentException("the range " + item.strip() + " ends before it starts");
      }
      if (step < 1) {
        throw new IllegalArgumentException("the step of " + item.strip() + " must be at least 1");
      }
      for (long i = from; i <= to; i += step) {
        ids.add((int) i);
        if (ids.size() > MAX_ELEMENTS) {
          throw new IllegalArgumentException(
              "an array holds at most " + MAX_ELEMENTS + " elements");
        }
      }
    }
    return new JobArray(new ArrayList<>(ids), limit);
  }
}

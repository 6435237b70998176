package io.kairos.control.state;

import java.util.Map;
import java.util.TreeMap;

/**
 * What makes a job an element of an array: the array's id (the job id of its first element, Slurm's
 * {@code %A}), this element's task id ({@code %a}) and the array's shape. The elements of one array
 * have consecutive job ids, from {@code arrayJobId} on, in task-id order.
 *
 * @param limit at most this many elements are queued or running at once; 0 for no limit
 */
public record ArrayElement(
    long arrayJobId, int taskId, int taskCount, int taskMin, int taskMax, int limit) {

  /** The job id of the array's last element. */
  public long lastJobId() {
    return arrayJobId + taskCount - 1;
  }

  /** {@code env} with the array's variables, Kairos' and Slurm's names, for the tasks. */
  public Map<String, String> withVariables(Map<String, String> env) {
    var out = new TreeMap<>(env);
    for (String p : new String[] {"KAIROS_", "SLURM_"}) {
      out.put(p + "ARRAY_JOB_ID", Long.toString(arrayJobId));
      out.put(p + "ARRAY_TASK_ID", Integer.toString(taskId));
      out.put(p + "ARRAY_TASK_COUNT", Integer.toString(taskCount));
      out.put(p + "ARRAY_TASK_MIN", Integer.toString(taskMin));
      out.put(p + "ARRAY_TASK_MAX", Integer.toString(taskMax));
    }
    return out;
  }
}

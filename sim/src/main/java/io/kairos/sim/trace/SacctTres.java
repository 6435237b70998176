package io.kairos.sim.trace;

import java.util.TreeSet;

/**
 * One Slurm TRES list ({@code AllocTRES}, {@code ReqTRES}): comma-separated {@code name=value}
 * pairs such as {@code billing=32,cpu=32,gres/gpu:a100=8,gres/gpu=8,mem=256G,node=1}.
 *
 * <p>GPUs are the untyped {@code gres/gpu=N} when it is there (Slurm lists it beside the typed
 * entries), else the sum of the typed {@code gres/gpu:MODEL=N}. Other GPU-related TRES such as
 * {@code gres/gpumem} and {@code gres/gpuutil} are not GPUs. Pairs other than GPUs, {@code node}
 * and {@code cpu} are ignored, whatever their value.
 *
 * @param gpus GPUs, or -1 when the list has no GPU entry (0 when it says {@code gres/gpu=0})
 * @param model the GPU model of the typed entries; several are joined with {@code +} in name order;
 *     "" when there is none
 * @param nodes the {@code node} count, or -1 when absent
 * @param cpus the {@code cpu} count, or -1 when absent
 */
record SacctTres(int gpus, String model, int nodes, int cpus) {
  static final SacctTres EMPTY = new SacctTres(-1, "", -1, -1);

  private static final String GPU = "gres/gpu";

  /**
   * Parses {@code text}.
   *
   * @param column the column it came from, for errors
   * @throws TraceFormatException naming the line and column when a pair has no {@code =} or a GPU,
   *     node or cpu count is not a whole number
   */
  static SacctTres parse(String text, String source, long lineNumber, String column) {
    if (text.isEmpty()) {
      return EMPTY;
    }
    int untyped = -1;
    long typed = -1;
    var models = new TreeSet<String>();
    int nodes = -1;
    int cpus = -1;
    int from = 0;
    while (from <= text.length()) {
      int comma = text.indexOf(',', from);
      int to = comma < 0 ? text.length() : comma;
      var pair = text.substring(from, to).strip();
      from = to + 1;
      if (pair.isEmpty()) {
        continue;
      }
      int eq = pair.indexOf('=');
      if (eq <= 0) {
        throw new TraceFormatException(
            source,
            lineNumber,
            column,
            "expected name=value pairs like cpu=8,gres/gpu=8,node=1, got '" + pair + "'");
      }
      var name = pair.substring(0, eq);
      var value = pair.substring(eq + 1);
      if (name.equals(GPU)) {
        untyped = count(value, pair, source, lineNumber, column);
      } else if (name.startsWith(GPU + ":")) {
        typed = Math.max(typed, 0) + count(value, pair, source, lineNumber, column);
        models.add(name.substring(GPU.length() + 1));
      } else if (name.equals("node")) {
        nodes = count(value, pair, source, lineNumber, column);
      } else if (name.equals("cpu")) {
        cpus = count(value, pair, source, lineNumber, column);
      }
    }
    if (typed > Integer.MAX_VALUE) {
      throw new TraceFormatException(
          source, lineNumber, column, "GPU count " + typed + " is too large in '" + text + "'");
    }
    int gpus = untyped >= 0 ? untyped : (int) typed;
    return new SacctTres(gpus, String.join("+", models), nodes, cpus);
  }

  private static int count(String value, String pair, String source, long line, String column) {
    double n = TraceNumbers.decimal(value, 0, value.length());
    if (!(n >= 0 && TraceNumbers.isInt(n))) {
      throw new TraceFormatException(
          source, line, column, "expected a whole count in '" + pair + "', got '" + value + "'");
    }
    return (int) n;
  }
}

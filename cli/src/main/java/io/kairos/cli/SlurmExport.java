package io.kairos.cli;

import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * sbatch's {@code --export}: which of the submitting shell's variables a batch job starts with.
 * {@code ALL} (Slurm's default) is every variable; {@code NONE} none (the job gets the node's
 * environment); otherwise a comma-separated list of names (those variables) and {@code NAME=VALUE}
 * pairs, with {@code ALL} among them for all the others too. Kairos' own variables ({@code
 * KAIROS_*}: the token, the server) and Slurm's ({@code SLURM_*}, {@code SLURMD_*}: the job sets
 * its own) are never sent, nor names the controller does not take (shell functions, {@code
 * BASH_FUNC_x%%}) or values over its limit.
 */
final class SlurmExport {
  private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,127}");
  private static final int MAX_VALUE_CHARS = 32_768;

  private SlurmExport() {}

  /**
   * The variables to send with the job.
   *
   * @param spec the {@code --export} value; null for Slurm's default, ALL
   * @param environment the submitting shell's variables
   * @throws IllegalArgumentException when an entry is neither a name nor NAME=VALUE
   */
  static Map<String, String> variables(String spec, Map<String, String> environment) {
    var out = new TreeMap<String, String>();
    String s = spec == null ? "ALL" : spec.strip();
    if (s.equalsIgnoreCase("NONE")) {
      return out;
    }
    boolean all = false;
    var assigned = new TreeMap<String, String>();
    var named = new TreeMap<String, String>();
    for (String entry : s.split(",")) {
      String e = entry.strip();
      if (e.equalsIgnoreCase("ALL")) {
        all = true;
      } else if (e.equalsIgnoreCase("NONE") || e.isEmpty()) {
        continue;
      } else if (e.indexOf('=') > 0) {
        assigned.put(e.substring(0, e.indexOf('=')), e.substring(e.indexOf('=') + 1));
      } else if (NAME.matcher(e).matches()) {
        named.put(e, environment.get(e));
      } else {
        throw new IllegalArgumentException(
            "cannot read '" + e + "'; write ALL, NONE, or names and NAME=VALUE separated by ','");
      }
    }
    if (all) {
      environment.forEach((k, v) -> put(out, k, v));
    }
    named.forEach((k, v) -> put(out, k, v));
    assigned.forEach((k, v) -> put(out, k, v));
    return out;
  }

  private static void put(Map<String, String> out, String name, String value) {
    if (value != null
        && NAME.matcher(name).matches()
        && !name.startsWith("KAIROS_")
        && !name.startsWith("SLURM_")
        && !name.startsWith("SLURMD_")
        && value.length() <= MAX_VALUE_CHARS
        && value.indexOf('\0') < 0) {
      out.put(name, value);
    }
  }
}

package io.kairos.control.state;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;

/**
 * A job's dependencies (Slurm's {@code --dependency}): clauses such as {@code afterok:12:13}, all
 * of which must hold ({@code ,}), or any one of which ({@code ?}).
 *
 * <p>A clause names jobs; naming an array's job id (its first element's id, {@code %A}) means every
 * element of that array, as in Slurm. Every state a clause looks at is final once reached, so a
 * clause that holds keeps holding and one that can never hold never will.
 *
 * @param any true when clauses were joined by '?' (any one suffices), false for ',' (all)
 */
public record Dependency(boolean any, List<Clause> clauses) {
  public static final int MAX_CLAUSES = 64;
  public static final int MAX_JOBS = 1_000;

  /** When a clause holds for one job it names. */
  public enum Kind {
    /** The job started (or ended without starting). */
    AFTER,
    /** The job ended, however. */
    AFTERANY,
    /** The job succeeded; never once it failed or was cancelled. */
    AFTEROK,
    /** The job failed or was cancelled; never once it succeeded. */
    AFTERNOTOK
  }

  /** One clause: a kind and the jobs it names, ascending and distinct. */
  public record Clause(Kind kind, List<Long> jobs) {
    public Clause {
      jobs = List.copyOf(new TreeSet<>(jobs));
      if (jobs.isEmpty()) {
        throw new IllegalArgumentException(kind.name().toLowerCase(Locale.ROOT) + " names no job");
      }
    }

    @Override
    public String toString() {
      var sb = new StringBuilder(kind.name().toLowerCase(Locale.ROOT));
      jobs.forEach(j -> sb.append(':').append(j));
      return sb.toString();
    }
  }

  public Dependency {
    clauses = List.copyOf(clauses);
    if (clauses.isEmpty()) {
      throw new IllegalArgumentException("a dependency needs at least one clause");
    }
  }

  /** Every job named, ascending and distinct. */
  public List<Long> jobs() {
    var all = new TreeSet<Long>();
    clauses.forEach(c -> all.addAll(c.jobs()));
    return List.copyOf(all);
  }

  /** The dependency in Slurm's syntax, normalized: "afterok:3:5,afterany:7". */
  @Override
  public String toString() {
    var sb = new StringBuilder();
    for (Clause c : clauses) {
      if (!sb.isEmpty()) {
        sb.append(any ? '?' : ',');
      }
      sb.append(c);
    }
    return sb.toString();
  }

  /**
   * Parses "afterok:12:13", "afterany:14", "afternotok:15", "after:16", joined by ',' (all must
   * hold) or '?' (any one must), not both.
   *
   * @throws IllegalArgumentException with a message for people
   */
  public static Dependency parse(String text) {
    String t = text.strip();
    boolean all = t.indexOf(',') >= 0;
    boolean any = t.indexOf('?') >= 0;
    if (all && any) {
      throw new IllegalArgumentException("join clauses with ',' (all) or '?' (any), not both");
    }
    String[] parts = t.split(any ? "\\?" : ",", -1);
    if (parts.length > MAX_CLAUSES) {
      throw new IllegalArgumentException("at most " + MAX_CLAUSES + " clauses");
    }
    var clauses = new ArrayList<Clause>();
    int named = 0;
    for (String part : parts) {
      String p = part.strip();
      if (p.equalsIgnoreCase("singleton")) {
        throw new IllegalArgumentException("singleton is not supported");
      }
      String[] fields = p.split(":", -1);
      Kind kind;
      try {
        kind = Kind.valueOf(fields[0].strip().toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            "'" + clip(fields[0]) + "' is not after, afterany," + " afterok or afternotok");
      }
      if (fields.length < 2) {
        throw new IllegalArgumentException("'" + clip(p) + "' names no job");
      }
      var ids = new ArrayList<Long>();
      for (int i = 1; i < fields.length; i++) {
        String f = fields[i].strip();
        if (!f.matches("[1-9]\\d{0,17}")) {
          throw new IllegalArgumentException(
              "'"
                  + clip(f)
                  + "' is not a job id"
                  + (f.contains("_") ? " (name an array element by its own job id)" : "")
                  + (f.contains("+") ? " (delays after a job are not supported)" : ""));
        }
        ids.add(Long.parseLong(f));
        if (++named > MAX_JOBS) {
          throw new IllegalArgumentException("at most " + MAX_JOBS + " job ids");
        }
      }
      clauses.add(new Clause(kind, ids));
    }
    return new Dependency(any, clauses);
  }

  private static String clip(String s) {
    return s.length() > 32 ? s.substring(0, 32) + "..." : s;
  }
}

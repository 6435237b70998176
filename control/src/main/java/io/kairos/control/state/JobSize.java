package io.kairos.control.state;

import java.util.List;
import java.util.Map;

/**
 * What a job's request costs the controller's memory, and so how much it counts against the {@link
 * Limits}: every replica computes the same from the request alone.
 *
 * <p>{@link #bytes}: the UTF-8 bytes of its user-given strings (name, command, env names and
 * values, workdir, output, error, checkpoint directory, excluded nodes, a batch script) plus
 * {@value #BYTES_PER_STRING} bytes per string and {@value #BYTES_PER_DEPENDENCY} per job its
 * dependency names, for the objects that hold them. A Java string of ASCII text takes about its
 * length plus 40 bytes, so this bounds what the request keeps on the heap.
 *
 * <p>{@link #weight}: how many jobs it counts as, 1 plus 1 per whole {@value #WEIGHT_UNIT_BYTES}
 * bytes: a typical job (a few hundred bytes) counts as one, a job carrying 64 KiB of env as 17. So
 * the count limits bound memory whatever the size of the jobs.
 */
public final class JobSize {
  /** The bytes of request one more unit of weight stands for. */
  public static final int WEIGHT_UNIT_BYTES = 4096;

  static final int BYTES_PER_STRING = 48;
  static final int BYTES_PER_DEPENDENCY = 24;

  private JobSize() {}

  /** The request's size as the controller keeps it (see the class comment). */
  public static long bytes(JobRequest r) {
    return nameBytes(r)
        + commandBytes(r)
        + envBytes(r)
        + pathBytes(r)
        + otherBytes(r)
        + scriptBytes(r);
  }

  /**
   * The part of {@link #bytes} that is a batch job's script (0 for none). It counts in the job's
   * weight, but not against {@code maxJobBytes}: a script has its own limit, Slurm's 4 MiB.
   */
  public static long scriptBytes(JobRequest r) {
    return r.script() == null ? 0 : utf8(r.script()) + BYTES_PER_STRING;
  }

  /** How many jobs the request counts as, per job it makes (array elements count each). */
  public static long weight(JobRequest r) {
    return 1 + bytes(r) / WEIGHT_UNIT_BYTES;
  }

  /** What the whole submit of {@code r} counts as: its weight times the jobs it makes. */
  public static long totalWeight(JobRequest r) {
    return weight(r) * r.jobCount();
  }

  /** The part of {@link #bytes} that is the command (its arguments). */
  public static long commandBytes(JobRequest r) {
    return strings(r.command());
  }

  /** The part of {@link #bytes} that is the env (names and values). */
  public static long envBytes(JobRequest r) {
    long n = 0;
    for (Map.Entry<String, String> e : r.env().entrySet()) {
      n += utf8(e.getKey()) + utf8(e.getValue()) + 2L * BYTES_PER_STRING;
    }
    return n;
  }

  /** The part of {@link #bytes} that is the paths: workdir, output, error, checkpoint directory. */
  public static long pathBytes(JobRequest r) {
    return utf8(r.workdir()) + utf8(r.output()) + utf8(r.error()) + utf8(r.checkpointDir());
  }

  private static long nameBytes(JobRequest r) {
    return utf8(r.name());
  }

  private static long otherBytes(JobRequest r) {
    long n = strings(r.excludeNodes());
    if (r.dependency() != null) {
      for (Dependency.Clause c : r.dependency().clauses()) {
        n += (long) c.jobs().size() * BYTES_PER_DEPENDENCY;
      }
    }
    return n;
  }

  private static long strings(List<String> list) {
    long n = 0;
    for (String s : list) {
      n += utf8(s) + BYTES_PER_STRING;
    }
    return n;
  }

  /** The UTF-8 length of {@code s}, without encoding it. */
  static long utf8(String s) {
    long n = 0;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x80) {
        n++;
      } else if (c < 0x800) {
        n += 2;
      } else if (Character.isHighSurrogate(c)
          && i + 1 < s.length()
          && Character.isLowSurrogate(s.charAt(i + 1))) {
        n += 4;
        i++;
      } else {
        n += 3;
      }
    }
    return n;
  }
}

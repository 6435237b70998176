package io.kairos.cli;

import io.kairos.protocol.JobState;
import io.kairos.protocol.JobView;
import io.kairos.protocol.TaskPlacement;
import io.kairos.protocol.slurm.HostList;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A Kairos job in Slurm's words, as squeue and sacct print them: ids ({@code 12_3} for an array
 * element), states ({@code COMPLETED}, {@code CD}), pending reasons ({@code Resources}), times and
 * durations in Slurm's forms, node lists compressed ({@code n[1-4]}), and the width rules of a
 * format field ({@code %.18i}: right-justified in 18; {@code %8j}: left-justified in 8; both cut
 * what is longer).
 */
final class SlurmFormat {
  private SlurmFormat() {}

  private static final DateTimeFormatter TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss", Locale.ROOT);

  /** The job's id as Slurm shows it: {@code ARRAY_TASK} for an array element. */
  static String jobId(JobView j) {
    return j.arrayJobId() == null || j.arrayTaskId() == null
        ? Long.toString(j.id())
        : j.arrayJobId() + "_" + j.arrayTaskId();
  }

  /** Slurm's long state name. */
  static String state(JobView j) {
    return switch (j.state()) {
      case PENDING -> "PENDING";
      case RUNNING -> "RUNNING";
      case SUCCEEDED -> "COMPLETED";
      case CANCELLED -> "CANCELLED";
      case FAILED ->
          j.message() != null && j.message().startsWith("time limit") ? "TIMEOUT" : "FAILED";
    };
  }

  /** Slurm's compact state: PD, R, CD, CA, F, TO. */
  static String compactState(JobView j) {
    return switch (state(j)) {
      case "PENDING" -> "PD";
      case "RUNNING" -> "R";
      case "COMPLETED" -> "CD";
      case "CANCELLED" -> "CA";
      case "TIMEOUT" -> "TO";
      default -> "F";
    };
  }

  /** The state names squeue and sacct take (-t), long or compact, in Kairos' states. */
  static List<JobState> states(List<String> names) {
    var out = new ArrayList<JobState>();
    for (String n : names) {
      switch (n.toUpperCase(Locale.ROOT)) {
        case "PD", "PENDING" -> out.add(JobState.PENDING);
        case "R", "RUNNING" -> out.add(JobState.RUNNING);
        case "CD", "COMPLETED" -> out.add(JobState.SUCCEEDED);
        case "CA", "CANCELLED" -> out.add(JobState.CANCELLED);
        case "F", "FAILED", "TO", "TIMEOUT" -> out.add(JobState.FAILED);
        case "ALL" -> out.addAll(List.of(JobState.values()));
        default ->
            throw new UsageException(
                "invalid job state specified: "
                    + n
                    + " (Kairos has PENDING, RUNNING, COMPLETED, FAILED, TIMEOUT, CANCELLED)");
      }
    }
    return out;
  }

  /** Why a pending job waits, in Slurm's reason words; "None" for any other job. */
  static String reason(JobView j) {
    if (j.state() != JobState.PENDING || j.pendingReason() == null) {
      return "None";
    }
    return switch (j.pendingReason()) {
      case "INSUFFICIENT_GPUS", "NO_PLACEMENT", "RESERVED", "PREEMPTING" -> "Resources";
      case "DEPENDENCY" -> "Dependency";
      case "ARRAY_LIMIT" -> "JobArrayTaskLimit";
      case "BEGIN_TIME" -> "BeginTime";
      case "QUOTA" -> "QOSGrpGRES";
      case "NO_NODE_CAN_HOLD", "NO_NODE_RUNS_AS", "NEVER_FITS" -> "ReqNodeNotAvail";
      case "NOT_YET_CONSIDERED" -> "None";
      default -> "Priority";
    };
  }

  /** The job's nodes in Slurm's compressed form; "" before it starts. */
  static String nodeList(JobView j) {
    if (j.placement() == null) {
      return "";
    }
    var nodes = new ArrayList<String>();
    for (TaskPlacement t : j.placement()) {
      if (!nodes.contains(t.node())) {
        nodes.add(t.node());
      }
    }
    return HostList.compress(nodes);
  }

  /** How many nodes it runs (or will run) on. */
  static int nodes(JobView j) {
    return j.placement() != null
        ? (int) j.placement().stream().map(TaskPlacement::node).distinct().count()
        : j.tasks();
  }

  /** Its CPUs in all: CPUs per task (at least one) times tasks, as Slurm counts them. */
  static int cpus(JobView j) {
    return Math.max(1, j.cpus()) * j.tasks();
  }

  /** How long it has run: start to end, or to now; 0 before it starts. */
  static long elapsedSec(JobView j, Instant now) {
    Instant start = TimeFormat.parse(j.startTime());
    if (start == null || j.state() == JobState.PENDING) {
      return 0;
    }
    Instant end = j.state().isFinal() ? TimeFormat.parse(j.endTime()) : now;
    return end == null ? 0 : Math.max(0, Duration.between(start, end).toSeconds());
  }

  /** squeue's durations: {@code 0:05}, {@code 12:05}, {@code 1:02:03}, {@code 2-01:02:03}. */
  static String squeueDuration(long seconds) {
    long d = seconds / 86400;
    long h = seconds / 3600 % 24;
    long m = seconds / 60 % 60;
    long s = seconds % 60;
    if (d > 0) {
      return String.format(Locale.ROOT, "%d-%02d:%02d:%02d", d, h, m, s);
    }
    if (h > 0) {
      return String.format(Locale.ROOT, "%d:%02d:%02d", h, m, s);
    }
    return String.format(Locale.ROOT, "%d:%02d", m, s);
  }

  /** sacct's durations: {@code 00:00:05}, {@code 2-01:02:03}. */
  static String sacctDuration(long seconds) {
    long d = seconds / 86400;
    String clock =
        String.format(
            Locale.ROOT, "%02d:%02d:%02d", seconds / 3600 % 24, seconds / 60 % 60, seconds % 60);
    return d > 0 ? d + "-" + clock : clock;
  }

  /** An instant as Slurm prints it, in local time ({@code 2026-03-28T12:00:00}); else absent. */
  static String time(String iso, String absent) {
    Instant t = TimeFormat.parse(iso);
    return t == null ? absent : TIME.format(LocalDateTime.ofInstant(t, Environment.zone));
  }

  /**
   * One field of a format string: {@code %[.][width]letter}, or a name with {@code %width} as
   * sacct's and squeue -O's take it.
   *
   * @param key the letter or the name
   * @param width 0 for as wide as the value
   * @param right right-justified ({@code .} in squeue)
   * @param literal text printed as is (key and width unused)
   */
  record Field(String key, int width, boolean right, String literal) {
    /** This field {@code width} wide. */
    Field withWidth(int w) {
      return new Field(key, w, right, literal);
    }

    /** The value padded and cut to the field's width. */
    String fit(String value) {
      if (literal != null) {
        return literal;
      }
      if (width <= 0) {
        return value;
      }
      String v = value.length() > width ? value.substring(0, width) : value;
      String pad = " ".repeat(width - v.length());
      return right ? pad + v : v + pad;
    }
  }

  /** The width of a {@code %#X} field: the widest of its values and its header (sinfo). */
  static final int AUTO = -1;

  /** squeue's {@code -o}: literal text and {@code %[.][width]letter} fields. */
  static List<Field> percentFormat(String format) {
    var out = new ArrayList<Field>();
    var text = new StringBuilder();
    int i = 0;
    while (i < format.length()) {
      char c = format.charAt(i);
      if (c != '%' || i + 1 >= format.length()) {
        text.append(c);
        i++;
        continue;
      }
      int j = i + 1;
      boolean right = false;
      boolean auto = false;
      if (format.charAt(j) == '#') {
        auto = true;
        j++;
      }
      if (j < format.length() && format.charAt(j) == '.') {
        right = true;
        j++;
      }
      int start = j;
      while (j < format.length() && Character.isDigit(format.charAt(j))) {
        j++;
      }
      if (j >= format.length()) {
        text.append(format, i, j);
        break;
      }
      if (format.charAt(j) == '%') {
        text.append('%');
        i = j + 1;
        continue;
      }
      if (!text.isEmpty()) {
        out.add(new Field(null, 0, false, text.toString()));
        text.setLength(0);
      }
      int width = j > start ? Integer.parseInt(format.substring(start, j)) : auto ? AUTO : 0;
      out.add(new Field(String.valueOf(format.charAt(j)), width, right, null));
      i = j + 1;
    }
    if (!text.isEmpty()) {
      out.add(new Field(null, 0, false, text.toString()));
    }
    return out;
  }
}

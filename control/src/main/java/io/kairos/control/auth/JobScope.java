package io.kairos.control.auth;

import java.util.regex.Pattern;

/**
 * What a job's step credential may reach: the job's own steps (start, watch, read their output,
 * cancel them), the job itself and its logs, its checkpoints (report and list), and who it is;
 * nothing else, and nothing of another job. The credential acts for the job's owner there, so a job
 * can start steps only in its own allocation, as its owner.
 */
public final class JobScope {
  /** The paths a step credential of job {@code N} may use, with N the first group. */
  private static final Pattern ALLOWED =
      Pattern.compile(
          "/api/v1/jobs/(\\d+)(|/logs|/checkpoints|/steps|/steps/\\d+|/steps/\\d+/output|/steps/\\d+/cancel)");

  private JobScope() {}

  /** Whether {@code who} may call {@code method path}: always, unless it is a step credential. */
  public static boolean allows(Principal who, String method, String path) {
    if (!who.isJobScoped()) {
      return true;
    }
    if (path.equals("/api/v1/whoami")) {
      return true;
    }
    var m = ALLOWED.matcher(path);
    if (!m.matches()) {
      return false;
    }
    try {
      if (Long.parseLong(m.group(1)) != who.scopedJob() || who.scopedJob() == 0) {
        return false;
      }
    } catch (NumberFormatException e) {
      return false;
    }
    String rest = m.group(2);
    boolean post = method.equals("POST");
    return switch (rest) {
      case "/steps", "/checkpoints" -> true;
      case "", "/logs" -> !post;
      default -> rest.endsWith("/cancel") ? post : !post;
    };
  }
}

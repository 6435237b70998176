package io.kairos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.protocol.LimitsUpdate;
import io.kairos.protocol.LimitsView;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code kairos limits set}: change the limits (admins). Options left out keep their values; with
 * {@code --user NAME}, {@code --max-jobs}, {@code --submits-per-sec} and {@code --submit-burst} set
 * that user's overrides (merged with the ones it has).
 */
@Command(
    name = "set",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Change the limits (admins only); options left out keep their values. The change goes"
          + " through the replicated log, so every replica enforces it. A lowered count limit"
          + " refuses new submits (jobs already in stay); a lowered --max-ended-jobs forgets the"
          + " oldest-ended jobs at once.",
      "Examples: kairos limits set --max-jobs-per-user 500",
      "          kairos limits set --user alice --max-jobs 2000 --submits-per-sec 50",
      "          kairos limits set --clear-user alice",
      ""
    })
final class LimitsSetCommand extends ApiCommand {
  @Option(
      names = "--max-jobs-per-user",
      paramLabel = "N",
      description = "A user's pending and running jobs, at most.")
  Long maxJobsPerUser;

  @Option(
      names = "--max-live-jobs",
      paramLabel = "N",
      description = "All pending and running jobs, at most.")
  Long maxLiveJobs;

  @Option(
      names = "--max-ended-jobs",
      paramLabel = "N",
      description =
          "Ended jobs kept for show and history (at least 1000); the oldest-ended beyond it are"
              + " forgotten.")
  Long maxEndedJobs;

  @Option(
      names = "--max-job-bytes",
      paramLabel = "BYTES",
      description = "One job's command, env and paths, at most.")
  Long maxJobBytes;

  @Option(
      names = "--submits-per-sec",
      paramLabel = "R",
      description = "Jobs a user may submit per second (with --user: that user's).")
  Double submitsPerSec;

  @Option(
      names = "--submit-burst",
      paramLabel = "N",
      description = "Jobs a user may submit at once (with --user: that user's).")
  Long submitBurst;

  @Option(names = "--user", paramLabel = "NAME", description = "Set this user's overrides.")
  String user;

  @Option(
      names = "--max-jobs",
      paramLabel = "N",
      description = "With --user: that user's pending and running jobs, at most.")
  Long maxJobs;

  @Option(names = "--clear-user", paramLabel = "NAME", description = "Remove a user's overrides.")
  String clearUser;

  @Option(
      names = "--reset",
      description = "Start from the controller's heap defaults, with no user overrides.")
  boolean reset;

  @Override
  int run(ApiClient api, PrintWriter out) {
    if (user == null && maxJobs != null) {
      throw new UsageException(
          "--max-jobs needs --user NAME (the cluster's is --max-jobs-per-user)");
    }
    Map<String, LimitsView.UserLimits> perUser = null;
    if (user != null || clearUser != null) {
      perUser = new LinkedHashMap<>();
      if (clearUser != null) {
        perUser.put(clearUser, null);
      }
      if (user != null) {
        if (maxJobs == null && submitsPerSec == null && submitBurst == null) {
          throw new UsageException(
              "--user " + user + " needs --max-jobs, --submits-per-sec or --submit-burst");
        }
        var now = Json.convert(api.get("/api/v1/limits"), LimitsView.class);
        var had = now.perUser() == null ? null : now.perUser().get(user);
        perUser.put(
            user,
            new LimitsView.UserLimits(
                maxJobs != null ? maxJobs : had == null ? null : had.maxJobs(),
                submitsPerSec != null ? submitsPerSec : had == null ? null : had.submitsPerSec(),
                submitBurst != null ? submitBurst : had == null ? null : had.submitBurst()));
      }
    }
    var update =
        new LimitsUpdate(
            maxJobsPerUser,
            maxLiveJobs,
            maxEndedJobs,
            maxJobBytes,
            user == null ? submitsPerSec : null,
            user == null ? submitBurst : null,
            perUser,
            reset ? Boolean.TRUE : null);
    JsonNode reply = api.put("/api/v1/limits", update);
    if (isJson()) {
      Json.print(out, reply);
    } else {
      LimitsCommand.print(Json.convert(reply, LimitsView.class), out);
    }
    return 0;
  }
}

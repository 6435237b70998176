package io.kairos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.protocol.LimitsView;
import java.io.PrintWriter;
import java.util.Locale;
import picocli.CommandLine.Command;

/**
 * {@code kairos limits}: what users may put into the controller and what counts against it now
 * ({@code limits show}, the default); admins change them with {@code limits set}.
 */
@Command(
    name = "limits",
    mixinStandardHelpOptions = true,
    subcommands = {LimitsCommand.Show.class, LimitsSetCommand.class},
    description = {
      "Show the limits that keep any one user from starving the controller: jobs per user,"
          + " live and ended jobs in all, a job's size and each user's submit rate, with what"
          + " counts against them now. Admins change them with `kairos limits set`.",
      "A job counts once, plus once per 4 KiB of its command, env and paths; each element of an"
          + " array counts.",
      ""
    })
final class LimitsCommand extends ApiCommand {
  @Override
  int run(ApiClient api, PrintWriter out) {
    return show(api, out, isJson());
  }

  /** {@code kairos limits show}: the same as {@code kairos limits}. */
  @Command(
      name = "show",
      mixinStandardHelpOptions = true,
      description = "Show the limits and what counts against them (any user).")
  static final class Show extends ApiCommand {
    @Override
    int run(ApiClient api, PrintWriter out) {
      return show(api, out, isJson());
    }
  }

  static int show(ApiClient api, PrintWriter out, boolean json) {
    JsonNode reply = api.get("/api/v1/limits");
    if (json) {
      Json.print(out, reply);
      return 0;
    }
    print(Json.convert(reply, LimitsView.class), out);
    return 0;
  }

  static void print(LimitsView l, PrintWriter out) {
    var d = l.defaults();
    var table = new Table("LIMIT", "VALUE", "IN USE", "HEAP DEFAULT");
    table.row(
        "maxJobsPerUser",
        count(l.maxJobsPerUser()),
        "-",
        d == null ? "-" : count(d.maxJobsPerUser()));
    table.row(
        "maxLiveJobs",
        count(l.maxLiveJobs()),
        l.liveJobs() == null ? "-" : count(l.liveJobs()),
        d == null ? "-" : count(d.maxLiveJobs()));
    table.row(
        "maxEndedJobs",
        count(l.maxEndedJobs()),
        l.endedJobs() == null ? "-" : count(l.endedJobs()),
        d == null ? "-" : count(d.maxEndedJobs()));
    table.row("maxJobBytes", count(l.maxJobBytes()), "-", d == null ? "-" : count(d.maxJobBytes()));
    table.row(
        "submitsPerSec", rate(l.submitsPerSec()), "-", d == null ? "-" : rate(d.submitsPerSec()));
    table.row("submitBurst", count(l.submitBurst()), "-", d == null ? "-" : count(d.submitBurst()));
    table.print(out);
    if (l.perUser() != null && !l.perUser().isEmpty()) {
      out.println();
      var users = new Table("USER", "MAX JOBS", "SUBMITS/S", "BURST");
      l.perUser()
          .forEach(
              (user, u) ->
                  users.row(
                      user,
                      u.maxJobs() == null ? "-" : count(u.maxJobs()),
                      u.submitsPerSec() == null ? "-" : rate(u.submitsPerSec()),
                      u.submitBurst() == null ? "-" : count(u.submitBurst())));
      users.print(out);
    }
    out.println();
    if (!l.set()) {
      out.println(
          "Not set yet: the leader proposes its heap's defaults once it leads; until then only"
              + " the size and rate limits apply.");
    }
    if (l.heapMaxBytes() != null) {
      out.printf(
          Locale.ROOT,
          "Heap of the replica that answered: %d MiB. A job counts once, plus once per 4 KiB of"
              + " its command, env and paths.%n",
          l.heapMaxBytes() >> 20);
    }
    out.flush();
  }

  static String count(long n) {
    return String.format(Locale.ROOT, "%,d", n);
  }

  static String rate(double perSec) {
    return perSec == Math.rint(perSec)
        ? count((long) perSec)
        : String.format(Locale.ROOT, "%.2f", perSec);
  }
}

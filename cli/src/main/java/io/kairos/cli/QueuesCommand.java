package io.kairos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.protocol.AccountView;
import io.kairos.protocol.QueueView;
import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine.Command;

/** {@code kairos queues}: each queue's load and quotas; the fair-share accounts below. */
@Command(
    name = "queues",
    mixinStandardHelpOptions = true,
    description = {
      "List queues: pending and running jobs, and with the controller's tenancy file each"
          + " queue's cohort and, per resource, usage of nominal quota and what it borrows.",
      "Then the fair-share accounts: shares, decayed GPU-hours and factor (1 = used nothing;"
          + " the leader computes them, '-' elsewhere).",
      ""
    })
final class QueuesCommand extends ApiCommand {
  @Override
  int run(ApiClient api, PrintWriter out) {
    JsonNode reply = api.get("/api/v1/queues");
    JsonNode accountsReply = api.get("/api/v1/accounts");
    if (isJson()) {
      var both = Json.MAPPER.createObjectNode();
      both.set("queues", reply);
      both.set("accounts", accountsReply);
      Json.print(out, both);
      return 0;
    }
    List<QueueView> queues = Json.list(reply, QueueView.class);
    var table =
        new Table(
            "QUEUE", "COHORT", "PENDING", "RUNNING", "GPUS", "QUOTA (used/nominal, borrowed)");
    for (QueueView q : queues) {
      table.row(
          q.name(),
          q.cohort() == null ? "-" : q.cohort(),
          q.pending(),
          q.running(),
          q.gpusRunning() + " running, " + q.gpusPending() + " asked",
          quotas(q.quotas()));
    }
    table.print(out);
    List<AccountView> accounts = Json.list(accountsReply, AccountView.class);
    if (!accounts.isEmpty()) {
      out.println();
      var t = new Table("ACCOUNT", "PARENT", "SHARES", "NORM SHARE", "GPU-HOURS", "FACTOR");
      for (AccountView a : accounts) {
        t.row(
            a.name(),
            a.parent(),
            a.shares(),
            String.format(Locale.ROOT, "%.3f", a.normalizedShare()),
            a.gpuHours() == null ? "-" : String.format(Locale.ROOT, "%.2f", a.gpuHours()),
            a.factor() == null ? "-" : String.format(Locale.ROOT, "%.3f", a.factor()));
      }
      t.print(out);
    }
    return 0;
  }

  /** {@code gpu:H100 6/8 +2, cpu 10/64}; "-" without quotas. */
  static String quotas(List<QueueView.Quota> quotas) {
    if (quotas == null || quotas.isEmpty()) {
      return "-";
    }
    var sb = new StringBuilder();
    for (QueueView.Quota q : quotas) {
      if (!sb.isEmpty()) {
        sb.append(", ");
      }
      boolean memory = "memory".equals(q.resource());
      sb.append(q.resource())
          .append(' ')
          .append(amount(q.usage(), memory))
          .append('/')
          .append(amount(q.nominal(), memory));
      if (q.borrowed() > 0) {
        sb.append(" +").append(amount(q.borrowed(), memory)).append(" borrowed");
      }
    }
    return sb.toString();
  }

  /** A count as is; memory in bytes with the largest binary unit that divides it (16Ti, 512Mi). */
  static String amount(long value, boolean memory) {
    if (!memory || value == 0) {
      return Long.toString(value);
    }
    String[] units = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    int u = 0;
    long v = value;
    while (u < units.length - 1 && v % 1024 == 0) {
      v /= 1024;
      u++;
    }
    return v + units[u];
  }
}

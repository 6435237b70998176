package io.kairos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.config.TenancyYaml;
import io.kairos.protocol.ConfigChange;
import io.kairos.protocol.ConfigUpdate;
import io.kairos.protocol.ConfigView;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code kairos config}: the site's configuration (queues, cohorts, quotas, priority classes,
 * accounts, scheduling settings; docs/tenancy.md), replicated through the controller's log: {@code
 * show}, {@code apply FILE} (validated whole, diffed, versioned, in force without a restart) and
 * {@code history}. Admins only.
 */
@Command(
    name = "config",
    mixinStandardHelpOptions = true,
    subcommands = {
      ConfigCommand.Show.class,
      ConfigCommand.Apply.class,
      ConfigCommand.History.class
    },
    description = {
      "The site's configuration: the tenancy document (queues, cohorts, quotas, priority classes,"
          + " accounts, scheduling settings; see docs/tenancy.md). It goes through the"
          + " controller's replicated log, so every replica schedules with the same one, and a"
          + " change takes effect without a restart. Admins only.",
      ""
    })
final class ConfigCommand extends ApiCommand {
  @Override
  int run(ApiClient api, PrintWriter out) {
    return Show.show(api, out, spec.commandLine().getErr(), isJson(), null);
  }

  /** {@code kairos config show [--version N]}. */
  @Command(
      name = "show",
      mixinStandardHelpOptions = true,
      description =
          "Print the configuration in force (or a kept earlier version) as the document applied;"
              + " its version, checksum and who applied it go to stderr.")
  static final class Show extends ApiCommand {
    @Option(
        names = "--version",
        paramLabel = "N",
        description = "A kept earlier version (`kairos config history` lists them).")
    Long version;

    @Override
    int run(ApiClient api, PrintWriter out) {
      return show(api, out, spec.commandLine().getErr(), isJson(), version);
    }

    static int show(ApiClient api, PrintWriter out, PrintWriter err, boolean json, Long version) {
      JsonNode reply = api.get("/api/v1/config" + (version == null ? "" : "?version=" + version));
      if (json) {
        Json.print(out, reply);
        return 0;
      }
      ConfigView v = Json.convert(reply, ConfigView.class);
      if (v.yaml() != null) {
        out.print(v.yaml().endsWith("\n") || v.yaml().isEmpty() ? v.yaml() : v.yaml() + "\n");
      }
      out.flush();
      switch (v.source()) {
        case "replicated" ->
            err.println(
                "# version "
                    + v.version()
                    + ", applied "
                    + v.appliedAt()
                    + " by "
                    + v.by()
                    + ", sha256 "
                    + v.sha256());
        case "startup" ->
            err.println(
                "# not replicated yet: the --tenancy file this controller was started with"
                    + " (`kairos config apply FILE` puts a version in the log)");
        default ->
            err.println(
                "# no configuration: one queue-less cluster (`kairos config apply FILE` sets one;"
                    + " see docs/tenancy.md)");
      }
      err.flush();
      return 0;
    }
  }

  /** {@code kairos config apply FILE [--dry-run] [--force] [--expect-version N]}. */
  @Command(
      name = "apply",
      mixinStandardHelpOptions = true,
      description = {
        "Validate FILE whole, show its diff against the configuration in force, and apply it as"
            + " the next version (in force on every replica at once, no restart).",
        "Refused while it removes a queue that pending or running jobs are in (--force applies"
            + " anyway: pending ones then wait with the reason \"unknown queue\"). Exit 0 when"
            + " applied or unchanged, 2 for an invalid file, 1 when refused."
      })
  static final class Apply extends ApiCommand {
    @Parameters(index = "0", paramLabel = "FILE", description = "The tenancy document (YAML).")
    Path file;

    @Option(names = "--dry-run", description = "Validate and show the diff; change nothing.")
    boolean dryRun;

    @Option(
        names = "--force",
        description = "Apply even if it removes queues that live jobs are in.")
    boolean force;

    @Option(
        names = "--expect-version",
        paramLabel = "N",
        description =
            "Refuse unless version N is the one in force (0: none yet): what a script passes so"
                + " that a change made meanwhile by someone else is not overwritten.")
    Long expectVersion;

    @Override
    int run(ApiClient api, PrintWriter out) {
      String text;
      try {
        text = Files.readString(file, StandardCharsets.UTF_8);
      } catch (IOException | RuntimeException e) {
        throw new UsageException(
            "FILE: cannot read " + file + ": " + e.getMessage() + " (check the path)");
      }
      try {
        TenancyYaml.parse(text, file.toString());
      } catch (TenancyYaml.InvalidConfig e) {
        throw new UsageException("the configuration is not valid:\n" + e.getMessage());
      }
      JsonNode reply =
          api.post(
              "/api/v1/config",
              new ConfigUpdate(text, expectVersion, dryRun ? true : null, force ? true : null));
      if (isJson()) {
        Json.print(out, reply);
        return 0;
      }
      ConfigChange c = Json.convert(reply, ConfigChange.class);
      out.print(c.diff());
      if (!c.queuesAdded().isEmpty()) {
        out.println("queues added: " + String.join(", ", c.queuesAdded()));
      }
      if (!c.queuesRemoved().isEmpty()) {
        out.println(
            "queues removed: "
                + String.join(", ", c.queuesRemoved())
                + (c.liveJobsInRemovedQueues() > 0
                    ? " (" + c.liveJobsInRemovedQueues() + " live jobs in them)"
                    : ""));
      }
      if (!c.changed()) {
        out.println("unchanged: version " + c.version() + " is this document");
      } else if (c.applied()) {
        out.println("applied: version " + c.version() + " (was " + c.fromVersion() + ")");
      } else {
        out.println("dry run: not applied (version " + c.fromVersion() + " stays in force)");
      }
      return 0;
    }
  }

  /** {@code kairos config history}. */
  @Command(
      name = "history",
      mixinStandardHelpOptions = true,
      description = "List the kept versions, newest first (the log keeps the last 64).")
  static final class History extends ApiCommand {
    @Override
    int run(ApiClient api, PrintWriter out) {
      JsonNode reply = api.get("/api/v1/config/history");
      if (isJson()) {
        Json.print(out, reply);
        return 0;
      }
      var table = new Table("VERSION", "APPLIED", "BY", "SHA256");
      for (ConfigView v : Json.list(reply, ConfigView.class)) {
        table.row(String.valueOf(v.version()), v.appliedAt(), v.by(), v.sha256().substring(0, 12));
      }
      table.print(out);
      return 0;
    }
  }
}

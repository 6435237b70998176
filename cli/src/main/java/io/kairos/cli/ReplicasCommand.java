package io.kairos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.protocol.ReplicaRequest;
import io.kairos.protocol.ReplicaView;
import java.io.PrintWriter;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code kairos replicas list|add|remove}: the controller group's voting members (admins). See
 * docs/operations.md for adding a replica and replacing one whose data directory was lost.
 */
@Command(
    name = "replicas",
    mixinStandardHelpOptions = true,
    subcommands = {
      ReplicasCommand.List.class,
      ReplicasCommand.Add.class,
      ReplicasCommand.Remove.class
    },
    description = {
      "The controller group's members (admins): list them, add one (it must already run, on an"
          + " empty data directory, with --peers naming the group and itself), remove one.",
      ""
    })
final class ReplicasCommand extends ApiCommand {
  @Override
  int run(ApiClient api, PrintWriter out) {
    return print(api.get("/api/v1/replicas"), out, isJson());
  }

  static int print(JsonNode reply, PrintWriter out, boolean json) {
    if (json) {
      Json.print(out, reply);
      return 0;
    }
    var table = new Table("REPLICA", "ROLE", "RAFT", "MATCH INDEX", "LAST CONTACT");
    for (ReplicaView r : Json.list(reply, ReplicaView.class)) {
      table.row(
          r.url(),
          r.leader() ? "leader" : "follower",
          r.raftAddress(),
          r.matchIndex() < 0 ? "-" : String.valueOf(r.matchIndex()),
          r.lastContactMs() < 0 ? "-" : r.lastContactMs() + " ms");
    }
    table.print(out);
    return 0;
  }

  /** {@code kairos replicas list}. */
  @Command(
      name = "list",
      mixinStandardHelpOptions = true,
      description =
          "List the members; asked of the leader, each follower's match index and last contact.")
  static final class List extends ApiCommand {
    @Override
    int run(ApiClient api, PrintWriter out) {
      return print(api.get("/api/v1/replicas"), out, isJson());
    }
  }

  /** {@code kairos replicas add HOST:PORT}. */
  @Command(
      name = "add",
      mixinStandardHelpOptions = true,
      description =
          "Add a replica, once it runs: the leader catches it up (log or snapshot) before it votes;"
              + " this returns when the new membership is committed.")
  static final class Add extends ApiCommand {
    @Parameters(
        index = "0",
        paramLabel = "HOST:PORT",
        description = "The new replica as --peers names it (host:httpPort[:raftPort]).")
    String address;

    @Override
    int run(ApiClient api, PrintWriter out) {
      return print(api.post("/api/v1/replicas", new ReplicaRequest(address)), out, isJson());
    }
  }

  /** {@code kairos replicas remove HOST:PORT}. */
  @Command(
      name = "remove",
      mixinStandardHelpOptions = true,
      description =
          "Remove a replica (needs a majority of the members that remain). Stop it afterwards.")
  static final class Remove extends ApiCommand {
    @Parameters(index = "0", paramLabel = "HOST:PORT", description = "The replica to remove.")
    String address;

    @Override
    int run(ApiClient api, PrintWriter out) {
      return print(
          api.delete("/api/v1/replicas/" + URLEncoder.encode(address, StandardCharsets.UTF_8)),
          out,
          isJson());
    }
  }
}

package io.kairos.control.api;

import io.javalin.config.JavalinConfig;
import io.kairos.control.raft.Membership;
import io.kairos.control.raft.PeerAddress;
import io.kairos.control.raft.RaftReplica;
import io.kairos.protocol.ReplicaRequest;
import io.kairos.protocol.ReplicaView;
import java.io.IOException;
import java.util.List;

/**
 * {@code /api/v1/replicas}: the controller group's voting members, and changes to them (admins).
 * Any replica answers; a change goes to the leader, which adds a member only once it has caught up
 * (log or snapshot) and removes one with a majority of both the old and the new members.
 */
final class ReplicaRoutes {
  private ReplicaRoutes() {}

  static void register(JavalinConfig config, Services s) {
    config.routes.get(
        "/api/v1/replicas",
        ctx -> {
          Api.admin(ctx);
          ctx.json(views(s.replica()));
        });
    config.routes.post(
        "/api/v1/replicas",
        ctx -> {
          Api.admin(ctx);
          ReplicaRequest req = Json.read(ctx.bodyAsBytes(), ReplicaRequest.class);
          PeerAddress peer = address(req == null ? null : req.address());
          var members = s.replica().membership().members();
          if (members.stream().anyMatch(m -> m.id().equals(peer.id()))) {
            throw ApiError.conflict(
                peer.host()
                    + ":"
                    + peer.httpPort()
                    + " is a member already (`kairos replicas list`)");
          }
          try {
            s.replica().membership().add(peer);
          } catch (IOException e) {
            throw new ApiError(
                503,
                "Unavailable",
                "the group did not add "
                    + peer.host()
                    + ":"
                    + peer.httpPort()
                    + ": "
                    + e.getMessage(),
                null,
                "start the new replica first, on an empty data directory, with --peers naming the"
                    + " group and itself, and the same cluster CA (--ca-from); then add it again");
          }
          ctx.json(views(s.replica()));
        });
    config.routes.delete(
        "/api/v1/replicas/{address}",
        ctx -> {
          Api.admin(ctx);
          PeerAddress peer = address(ctx.pathParam("address"));
          List<Membership.Member> members = s.replica().membership().members();
          if (members.stream().noneMatch(m -> m.id().equals(peer.id()))) {
            throw ApiError.notFound(
                "no member "
                    + peer.host()
                    + ":"
                    + peer.httpPort()
                    + "; `kairos replicas list` shows them");
          }
          if (members.size() == 1) {
            throw ApiError.conflict("the group's last member cannot be removed");
          }
          try {
            s.replica().membership().remove(peer.id());
          } catch (IOException e) {
            throw new ApiError(
                503,
                "Unavailable",
                "the group did not remove it: " + e.getMessage(),
                null,
                "a removal needs a majority of the members that remain: start the ones that are"
                    + " down, then retry");
          }
          ctx.json(views(s.replica()));
        });
  }

  private static PeerAddress address(String text) {
    if (text == null || text.isBlank()) {
      throw ApiError.invalid(
          "address", "the replica's address is missing", "give host:httpPort, as --peers names it");
    }
    try {
      return PeerAddress.parse(text);
    } catch (IllegalArgumentException e) {
      throw ApiError.invalid(
          "address",
          "'" + Submissions.clip(text) + "' is not a replica address: " + e.getMessage(),
          "give host:httpPort (or host:httpPort:raftPort), as --peers names it");
    }
  }

  static List<ReplicaView> views(RaftReplica r) {
    return r.membership().members().stream()
        .map(
            m ->
                new ReplicaView(
                    m.id(),
                    r.urlOf(m.id(), m.raftAddress()),
                    m.raftAddress(),
                    m.leader(),
                    m.matchIndex(),
                    m.lastContactMs()))
        .toList();
  }
}

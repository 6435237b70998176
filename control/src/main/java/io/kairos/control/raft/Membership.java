package io.kairos.control.raft;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.SetConfigurationRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The group's voting members (the Raft configuration in force), and changes to it through the
 * leader: add a replica (it catches up from the leader, by log or snapshot, before it votes),
 * remove one, and the re-join of a replica whose data directory was lost.
 *
 * <p>Design note. Raft assumes a member's log is durable: a member that lost its disk and comes
 * back empty is still, to the leader, the follower that had acknowledged index N, and Ratis' leader
 * keeps sending from N+1 to a follower that answers "I have nothing" forever. Safe recovery is a
 * membership change: the member is removed and added again, so the leader tracks it as a new
 * follower from index 0 and lets it vote only once caught up. {@link #rejoinIfWiped} does that from
 * the empty replica itself.
 */
public final class Membership {
  private static final Logger LOG = LoggerFactory.getLogger(Membership.class);

  private final RaftReplica replica;

  Membership(RaftReplica replica) {
    this.replica = replica;
  }

  /**
   * One voting member.
   *
   * @param id the Raft peer id ({@code host_httpPort})
   * @param raftAddress where its Raft transport listens
   * @param leader whether it leads (as this replica knows)
   * @param matchIndex the last log index the leader knows it holds; -1 when this replica is not the
   *     leader (only the leader knows)
   * @param lastContactMs how long since the leader last heard from it; -1 as above
   */
  public record Member(
      String id, String raftAddress, boolean leader, long matchIndex, long lastContactMs) {}

  /** The voting members in the configuration this replica holds, by id. */
  public List<Member> members() {
    var division = replica.division().orElse(null);
    if (division == null) {
      return List.of();
    }
    var info = division.getInfo();
    String leaderId = info.getLeaderId() == null ? null : info.getLeaderId().toString();
    var followers = new java.util.HashMap<String, long[]>();
    if (info.isLeader()) {
      // The leader's followers and their match indices, in the same (appender) order.
      var list = info.getRoleInfoProto().getLeaderInfo().getFollowerInfoList();
      long[] match = info.getFollowerMatchIndices();
      for (int i = 0; i < list.size(); i++) {
        followers.put(
            list.get(i).getId().getId().toStringUtf8(),
            new long[] {i < match.length ? match[i] : -1, list.get(i).getLastRpcElapsedTimeMs()});
      }
    }
    var out = new ArrayList<Member>();
    for (RaftPeer p : division.getRaftConf().getCurrentPeers()) {
      String id = p.getId().toString();
      long[] f = followers.get(id);
      boolean self = id.equals(replica.self().id());
      long match =
          f != null
              ? f[0]
              : self && info.isLeader() ? division.getRaftLog().getLastCommittedIndex() : -1;
      out.add(
          new Member(
              id,
              p.getAddress(),
              id.equals(leaderId),
              match,
              f != null ? f[1] : self && info.isLeader() ? 0 : -1));
    }
    out.sort(java.util.Comparator.comparing(Member::id));
    return out;
  }

  /**
   * Adds {@code peer} to the voting members. Returns once the leader has caught it up and the new
   * configuration is committed.
   *
   * @throws IOException when there is no leader, or the new replica did not catch up in time (it
   *     must already run, started with {@code --peers} naming the group and itself, on an empty
   *     data directory)
   */
  public void add(PeerAddress peer) throws IOException {
    setConfiguration(
        SetConfigurationRequest.Arguments.newBuilder()
            .setServersInNewConf(List.of(RaftReplica.raftPeer(peer)))
            .setMode(SetConfigurationRequest.Mode.ADD)
            .build());
  }

  /**
   * Removes the member {@code id} from the voting members (the configuration change needs a
   * majority of both the old and the new members).
   */
  public void remove(String id) throws IOException {
    List<RaftPeer> current = currentPeers();
    List<RaftPeer> next = current.stream().filter(p -> !p.getId().toString().equals(id)).toList();
    if (next.size() == current.size()) {
      throw new IllegalArgumentException("no member " + id);
    }
    if (next.isEmpty()) {
      throw new IllegalArgumentException("the last member cannot be removed");
    }
    setConfiguration(
        SetConfigurationRequest.Arguments.newBuilder()
            .setServersInCurrentConf(current)
            .setServersInNewConf(next)
            .setMode(SetConfigurationRequest.Mode.COMPARE_AND_SET)
            .build());
  }

  private List<RaftPeer> currentPeers() throws IOException {
    var division =
        replica.division().orElseThrow(() -> new IOException("the Raft server is not running"));
    return List.copyOf(division.getRaftConf().getCurrentPeers());
  }

  private void setConfiguration(SetConfigurationRequest.Arguments args) throws IOException {
    try (RaftClient client = replica.newAdminClient()) {
      var reply = client.admin().setConfiguration(args);
      if (!reply.isSuccess()) {
        throw new IOException(
            "the group did not change its members: "
                + (reply.getException() == null ? "refused" : reply.getException().getMessage()));
      }
    }
  }

  /**
   * On a replica that started on an empty data directory in a group of several: whether, after
   * hearing a leader for {@code wait}, it has still applied nothing. Then the leader believes this
   * member holds what it acknowledged before its disk was lost, and will never send it the log: an
   * admin must remove it and add it again ({@code kairos replicas remove}, then {@code add}). A
   * member of a new group applies the group's first entries as soon as it hears a leader.
   */
  public boolean looksWiped(Duration wait) throws InterruptedException {
    if (!replica.formatted() || replica.peers().size() < 2) {
      return false;
    }
    long heardSince = -1;
    while (replica.appliedIndex() < 0) {
      boolean leaderKnown =
          replica.division().map(d -> d.getInfo().getLeaderId() != null).orElse(false);
      long now = System.nanoTime();
      if (!leaderKnown) {
        heardSince = -1;
      } else if (heardSince < 0) {
        heardSince = now;
      } else if (now - heardSince > wait.toNanos()) {
        return true;
      }
      Thread.sleep(200);
    }
    return false;
  }
}

package io.kairos.control.raft;

import io.kairos.control.state.ControlCommand;
import io.kairos.control.state.ControlResult;
import java.io.Closeable;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.stream.Collectors;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.AlreadyClosedException;
import org.apache.ratis.protocol.exceptions.RaftRetryFailureException;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;

/**
 * One replica of the controller group: a Ratis server with the {@link KairosStateMachine} and its
 * log under {@code DATA/raft}, plus a Ratis client for proposing commands. The client finds the
 * leader itself, so a command proposed on a follower is forwarded to the leader.
 *
 * <p>Durability: the Ratis log is flushed (fsync) before an entry counts as committed, so an
 * acknowledged command survives a crash of the single replica, and of any minority of a group.
 *
 * <p>Exposure: the Raft port binds only the {@link RaftTransport}'s host. With mutual TLS, the
 * server demands a client certificate and both sides accept only a peer presenting a replica
 * certificate of the cluster CA; the client this replica proposes through presents its own. A Ratis
 * client without such a certificate cannot open a connection, let alone append to the log.
 */
public final class RaftReplica implements Closeable {
  /** One group per Kairos cluster; its id is fixed so that every replica agrees. */
  static final RaftGroupId GROUP_ID =
      RaftGroupId.valueOf(
          UUID.nameUUIDFromBytes("kairos-controller".getBytes(StandardCharsets.UTF_8)));

  private final PeerAddress self;
  private final String scheme;
  private final List<PeerAddress> peers;
  private final boolean formatted;
  private final boolean joining;
  private final KairosStateMachine stateMachine = new KairosStateMachine();
  private final Map<String, PeerAddress> peersById;
  private final RaftServer server;
  private final RaftProperties properties;
  private final Parameters parameters;
  private final RaftGroup group;

  /** Replaced when Ratis has failed its ordered sliding window (see {@link #propose}). */
  private volatile RaftClient client;

  private volatile boolean closed;
  private final Readiness readiness = new Readiness(Readiness.STUCK_AFTER, System::nanoTime);
  private final org.apache.ratis.protocol.ClientId localClientId =
      org.apache.ratis.protocol.ClientId.randomId();
  private final java.util.concurrent.atomic.AtomicLong localCallIds =
      new java.util.concurrent.atomic.AtomicLong();

  /**
   * @param self this replica (one of {@code peers})
   * @param peers the whole group (1, 3 or 5 replicas)
   * @param dataDir where the log and snapshots live ({@code DATA/raft})
   */
  public RaftReplica(PeerAddress self, List<PeerAddress> peers, Path dataDir) throws IOException {
    this(self, peers, dataDir, "http", RaftTransport.plain(self.host()), false);
  }

  /**
   * As above; {@code scheme} ("http" or "https") is how the replicas' APIs are reached, and {@code
   * transport} where the Raft port binds and whether it speaks mutual TLS. With {@code join}, an
   * empty data directory joins a group that already runs: Ratis starts it outside the group's
   * configuration, so it neither votes nor campaigns (a member that does not know it has been
   * removed campaigns, is told by the leader that it is not in the configuration, and shuts its
   * Raft server down) until the leader, once a member has added it ({@code kairos replicas add}),
   * has sent it the log, configuration included. A data directory that holds a log ignores it.
   */
  public RaftReplica(
      PeerAddress self,
      List<PeerAddress> peers,
      Path dataDir,
      String scheme,
      RaftTransport transport,
      boolean join)
      throws IOException {
    this.scheme = scheme;
    this.self = self;
    this.peers = List.copyOf(peers);
    this.peersById = peers.stream().collect(Collectors.toMap(PeerAddress::id, p -> p));
    if (!peersById.containsKey(self.id())) {
      throw new IllegalArgumentException("this replica " + self + " is not in the peers " + peers);
    }
    Path raftDir = dataDir.resolve("raft");
    Files.createDirectories(raftDir);
    var group =
        RaftGroup.valueOf(
            GROUP_ID,
            peers.stream()
                .map(p -> RaftPeer.newBuilder().setId(p.id()).setAddress(p.raftAddress()).build())
                .toList());
    this.group = group;
    this.properties = properties(raftDir, transport.bindHost(), self.raftPort());
    this.parameters = new Parameters();
    transport
        .tls()
        .ifPresent(
            tls ->
                GrpcConfigKeys.TLS.setConf(
                    parameters, new GrpcTlsConfig(tls.keys(), tls.trust(), true)));
    // A data directory that already holds this group's log recovers it; a new one is formatted.
    boolean existing = Files.isDirectory(raftDir.resolve(GROUP_ID.getUuid().toString()));
    this.formatted = !existing;
    this.joining = join && !existing;
    if (joining && peers.size() < 2) {
      throw new IllegalArgumentException(
          "--join needs --peers: a replica joins a group of several, and a single replica has"
              + " no group to join");
    }
    // Clients reach the whole group; the server of a joining replica starts with the group's id
    // and no members (Ratis then starts it "initializing": no election timer, no votes, until the
    // leader includes it and has caught it up). The log it receives brings the configuration.
    var serverGroup = joining ? RaftGroup.valueOf(GROUP_ID) : group;
    server =
        RaftServer.newBuilder()
            .setServerId(RaftPeerId.valueOf(self.id()))
            .setGroup(serverGroup)
            .setStateMachine(stateMachine)
            .setProperties(properties)
            .setParameters(parameters)
            .setOption(
                existing ? RaftStorage.StartupOption.RECOVER : RaftStorage.StartupOption.FORMAT)
            .build();
    client = newClient();
  }

  /** A client of its own for an admin request (membership); the caller closes it. */
  RaftClient newAdminClient() {
    return newClient();
  }

  /** Whether this start formatted an empty data directory (rather than recovering a log). */
  boolean formatted() {
    return formatted;
  }

  /** Whether this start joins a running group ({@code --join} on an empty data directory). */
  public boolean joining() {
    return joining;
  }

  /** The Raft peer a replica address is. */
  static RaftPeer raftPeer(PeerAddress p) {
    return RaftPeer.newBuilder().setId(p.id()).setAddress(p.raftAddress()).build();
  }

  /** The group's membership, as this replica sees it ({@link Membership}). */
  public Membership membership() {
    return new Membership(this);
  }

  private RaftClient newClient() {
    return RaftClient.newBuilder()
        .setProperties(properties)
        .setParameters(parameters)
        .setRaftGroup(group)
        .setLeaderId(null)
        .setRetryPolicy(
            RetryPolicies.retryUpToMaximumCountWithFixedSleep(
                200, TimeDuration.valueOf(50, java.util.concurrent.TimeUnit.MILLISECONDS)))
        .build();
  }

  private static RaftProperties properties(Path raftDir, String bindHost, int raftPort) {
    var p = new RaftProperties();
    RaftServerConfigKeys.setStorageDir(p, List.of(raftDir.toFile()));
    // One port serves Raft, clients and admin (their ports are left at "the server's"); all three
    // bind this host only.
    GrpcConfigKeys.Server.setHost(p, bindHost);
    GrpcConfigKeys.Client.setHost(p, bindHost);
    GrpcConfigKeys.Admin.setHost(p, bindHost);
    GrpcConfigKeys.Server.setPort(p, raftPort);
    // Snapshot every 20,000 entries and drop the log it covers; restart replays the rest.
    RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, true);
    RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(p, 20_000);
    RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(p, true);
    RaftServerConfigKeys.Log.setSegmentSizeMax(p, SizeInBytes.valueOf("32MB"));
    // No log entry recording the commit index after each commit (Ratis' "log metadata", for
    // recovering the commit index when a majority is lost): a restarted group learns it from its
    // new leader's first commit, as Raft does, and the replay applies the same entries. In the
    // turnover benchmark such an entry followed almost every commit: a log write, a flush and an
    // apply each.
    RaftServerConfigKeys.Log.setLogMetadataEnabled(p, false);
    // Memory: the log's cache and the queues of entries not yet written are bounded by the heap
    // (a sixteenth each, 16 to 64 MiB), so a burst of large submits cannot fill it (Ratis' own
    // defaults, 200 MiB of cache and 64 MiB per queue, exceed a small controller's heap).
    long queue = Math.clamp(Runtime.getRuntime().maxMemory() / 16, 16L << 20, 64L << 20);
    RaftServerConfigKeys.Log.setSegmentCacheNumMax(p, 2);
    RaftServerConfigKeys.Log.setSegmentCacheSizeMax(p, SizeInBytes.valueOf(queue));
    RaftServerConfigKeys.Log.setQueueByteLimit(p, SizeInBytes.valueOf(queue));
    RaftServerConfigKeys.Write.setByteLimit(p, SizeInBytes.valueOf(queue));
    RaftServerConfigKeys.Log.Appender.setBufferByteLimit(p, SizeInBytes.valueOf("8MB"));
    RaftServerConfigKeys.Log.setWriteBufferSize(p, SizeInBytes.valueOf("9MB"));
    GrpcConfigKeys.setMessageSizeMax(p, SizeInBytes.valueOf("16MB"));
    // Elections: a new leader within a few seconds of losing the old one.
    RaftServerConfigKeys.Rpc.setTimeoutMin(
        p, TimeDuration.valueOf(600, java.util.concurrent.TimeUnit.MILLISECONDS));
    RaftServerConfigKeys.Rpc.setTimeoutMax(
        p, TimeDuration.valueOf(1200, java.util.concurrent.TimeUnit.MILLISECONDS));
    RaftClientConfigKeys.Rpc.setRequestTimeout(
        p, TimeDuration.valueOf(3, java.util.concurrent.TimeUnit.SECONDS));
    return p;
  }

  public void start() throws IOException {
    server.start();
  }

  /**
   * Proposes a command; completes with its result once committed and applied here or remotely.
   *
   * <p>Ratis' ordered async client fails its sliding window for good once one request runs out of
   * retries (no leader for ~10 s: a lone replica at startup, a minority partition): every later
   * request then fails at once with AlreadyClosedException. So such a failure replaces the client;
   * without this the replica could never commit again until restarted.
   */
  public CompletableFuture<ControlResult> propose(ControlCommand command) {
    Message message = Message.valueOf(ByteString.copyFrom(CommandCodec.encode(command)));
    if (isLeader()) {
      return proposeLocally(message);
    }
    return proposeThroughClient(message);
  }

  /**
   * On the leader, hands the entry to the local server directly: no gRPC round trip through
   * loopback, which cost about a third of the CPU of a submit. If leadership moved meanwhile the
   * server refuses it unlogged (not leader, leader not ready), and the client, which follows the
   * leader, takes over; any other failure is the caller's.
   */
  private CompletableFuture<ControlResult> proposeLocally(Message message) {
    var request =
        RaftClientRequest.newBuilder()
            .setClientId(localClientId)
            .setServerId(RaftPeerId.valueOf(self.id()))
            .setGroupId(GROUP_ID)
            .setCallId(localCallIds.incrementAndGet())
            .setMessage(message)
            .setType(RaftClientRequest.writeRequestType())
            .build();
    try {
      return server
          .submitClientRequestAsync(request)
          .thenCompose(
              reply -> {
                if (reply.isSuccess()) {
                  return CompletableFuture.completedFuture(
                      CommandCodec.decodeResult(reply.getMessage().getContent().toByteArray()));
                }
                if (reply.getNotLeaderException() != null
                    || reply.getLeaderNotReadyException() != null) {
                  return proposeThroughClient(message);
                }
                return CompletableFuture.failedFuture(
                    new IOException("not committed: " + reply.getException()));
              });
    } catch (IOException e) {
      return proposeThroughClient(message);
    }
  }

  private CompletableFuture<ControlResult> proposeThroughClient(Message message) {
    RaftClient used = client;
    return used.async()
        .send(message)
        .whenComplete(
            (reply, error) -> {
              if (error != null && windowFailed(error)) {
                renewClient(used);
              }
            })
        .thenApply(
            reply -> {
              if (!reply.isSuccess()) {
                throw new CompletionException(
                    new IOException("not committed: " + reply.getException()));
              }
              return CommandCodec.decodeResult(reply.getMessage().getContent().toByteArray());
            });
  }

  private static boolean windowFailed(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause()) {
      if (t instanceof AlreadyClosedException || t instanceof RaftRetryFailureException) {
        return true;
      }
    }
    return false;
  }

  private void renewClient(RaftClient broken) {
    synchronized (this) {
      if (closed || client != broken) {
        return;
      }
      client = newClient();
    }
    try {
      broken.close();
    } catch (IOException | RuntimeException e) {
      // its requests have all failed already; nothing else to release
    }
  }

  public KairosStateMachine stateMachine() {
    return stateMachine;
  }

  public PeerAddress self() {
    return self;
  }

  public List<PeerAddress> peers() {
    return peers;
  }

  Optional<RaftServer.Division> division() {
    try {
      return Optional.of(server.getDivision(GROUP_ID));
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  /** Whether this replica leads and has applied its term's first entry (ready to schedule). */
  public boolean isLeaderReady() {
    return division().map(d -> d.getInfo().isLeader() && d.getInfo().isLeaderReady()).orElse(false);
  }

  public boolean isLeader() {
    return division().map(d -> d.getInfo().isLeader()).orElse(false);
  }

  /** The leader's HTTP base URL, when one is known. */
  public Optional<String> leaderUrl() {
    return division()
        .map(
            d -> {
              var id = d.getInfo().getLeaderId();
              if (id == null) {
                return null;
              }
              var peer = d.getRaftConf().getPeer(id);
              return urlOf(id.toString(), peer == null ? null : peer.getAddress());
            });
  }

  /**
   * The API URL of the member {@code id}: from {@code --peers} when it is named there; for a member
   * added since ({@code kairos replicas add}), its Raft host and the HTTP port its id ends with.
   */
  public String urlOf(String id, String raftAddress) {
    PeerAddress known = peersById.get(id);
    if (known != null) {
      return urlOf(known);
    }
    int cut = id.lastIndexOf('_');
    String host =
        raftAddress == null ? "?" : raftAddress.substring(0, raftAddress.lastIndexOf(':'));
    return scheme + "://" + host + ":" + (cut < 0 ? "?" : id.substring(cut + 1));
  }

  /** A replica's API base URL, with the scheme this group serves. */
  public String urlOf(PeerAddress peer) {
    return scheme + "://" + peer.host() + ":" + peer.httpPort();
  }

  public long appliedIndex() {
    return division().map(d -> d.getInfo().getLastAppliedIndex()).orElse(-1L);
  }

  /**
   * Asks this replica to take a snapshot now (it takes them by itself every 20,000 entries). The
   * snapshot is written in the background: this returns once it is under way.
   */
  public void requestSnapshot(Duration timeout) throws IOException {
    var reply =
        client
            .getSnapshotManagementApi(RaftPeerId.valueOf(self.id()))
            .create(true, timeout.toMillis());
    if (!reply.isSuccess()) {
      throw new IOException("snapshot not taken: " + reply.getException());
    }
  }

  /** Why this replica cannot do its work now ({@link Readiness}); empty when it can. */
  public Optional<String> notReady() {
    return readiness.judge(observe(readiness.stuckAfterMs()));
  }

  private Readiness.Observation observe(long withinMs) {
    var division = division().orElse(null);
    if (division == null || !division.getInfo().isAlive()) {
      return new Readiness.Observation(false, false, false, false, peers.size(), 0, -1, 0, 0, 0);
    }
    var info = division.getInfo();
    var log = division.getRaftLog();
    var role = info.getRoleInfoProto();
    int heard = 0;
    long leaderSilentMs = -1;
    if (info.isLeader()) {
      heard = 1;
      for (var f : role.getLeaderInfo().getFollowerInfoList()) {
        if (f.getLastRpcElapsedTimeMs() <= withinMs) {
          heard++;
        }
      }
    } else if (role.hasFollowerInfo()) {
      leaderSilentMs = role.getFollowerInfo().getLeaderInfo().getLastRpcElapsedTimeMs();
    }
    return new Readiness.Observation(
        true,
        info.getLeaderId() != null,
        info.isLeader(),
        info.isLeaderReady(),
        peers.size(),
        heard,
        leaderSilentMs,
        log.getNextIndex() - 1,
        log.getLastCommittedIndex(),
        info.getLastAppliedIndex());
  }

  @Override
  public void close() throws IOException {
    RaftClient last;
    synchronized (this) {
      closed = true;
      last = client;
    }
    try {
      last.close();
    } finally {
      server.close();
    }
  }
}

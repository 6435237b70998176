package io.kairos.control;

import io.javalin.Javalin;
import io.kairos.control.accounting.Accounting;
import io.kairos.control.accounting.AccountingSettings;
import io.kairos.control.agent.AgentLogs;
import io.kairos.control.agent.AgentService;
import io.kairos.control.agent.NodeIdentity;
import io.kairos.control.agent.PriorLeases;
import io.kairos.control.api.Api;
import io.kairos.control.api.Safeguards;
import io.kairos.control.api.Services;
import io.kairos.control.auth.Authenticator;
import io.kairos.control.auth.RunAsPolicy;
import io.kairos.control.auth.TokenUses;
import io.kairos.control.auth.Tokens;
import io.kairos.control.dashboard.UtilizationHistory;
import io.kairos.control.dashboard.UtilizationSampler;
import io.kairos.control.k8s.K8sExtender;
import io.kairos.control.k8s.KubeApi;
import io.kairos.control.raft.PeerAddress;
import io.kairos.control.raft.PrivateFiles;
import io.kairos.control.raft.RaftReplica;
import io.kairos.control.raft.SubmitBatcher;
import io.kairos.control.sched.SchedulerLoop;
import io.kairos.control.state.ControlCommand.TokensUsed;
import io.kairos.control.state.Limits;
import io.kairos.control.state.TokenRecord;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One controller replica: the Ratis replica, the REST API, the scheduler loop and the agent
 * service, wired together. {@code kairos server} and {@code kairos up} run one; tests start them
 * in-process or as processes.
 *
 * <p>First start of a data directory writes {@code admin.token} and {@code join.token} (mode 0600)
 * and registers their hashes through the log, so every replica accepts them.
 */
public final class Controller implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(Controller.class);

  /** HTTPS: a PKCS#12 keystore holding the certificate and its key. */
  public record Tls(Path keystore, String password) {}

  private final ControllerConfig config;
  private final RaftReplica replica;
  private final SubmitBatcher batcher;
  private final SchedulerLoop scheduler;
  private final AgentService agents;
  private final UtilizationSampler sampler;
  private final Javalin http;
  private final Exposure exposure;
  private final List<String> warnings;
  private final String adminToken;
  private final String joinToken;
  private final Thread bootstrap;
  private final Bootstrap bootstrapping;
  private final TokenUses tokenUses;
  private final Accounting accounting;

  private Controller(ControllerConfig config, AccountingSettings accountingSettings)
      throws IOException {
    PrivateFiles.keepDataPrivate(config.dataDir());
    List<PeerAddress> peers = config.peers();
    boolean group = !peers.isEmpty();
    var binding = config.security().raftBinding(config.self(), group);
    PeerAddress self = binding.self();
    if (!group) {
      if (self.httpPort() == 0 || self.raftPort() == 0) {
        int http = self.httpPort() == 0 ? Ports.freePort() : self.httpPort();
        int raft = self.raftPort() == 0 ? Ports.freePort() : self.raftPort();
        self = new PeerAddress(self.host(), http, raft, self.raftHost());
      }
      peers = List.of(self);
    }
    this.config =
        new ControllerConfig(
            config.dataDir(),
            self,
            peers,
            config.policy(),
            config.tls(),
            config.detection(),
            config.kubeApi(),
            config.tenancy(),
            config.runAs(),
            config.security(),
            config.privateData(),
            config.slurm(),
            config.lease(),
            config.join());
    Ports.ensureFree(self.host(), self.httpPort(), "the API (--listen)");
    Ports.ensureFree(
        binding.bindHost(),
        self.raftPort(),
        "the Raft transport (--raft-listen, or --listen port + "
            + PeerAddress.RAFT_PORT_OFFSET
            + ")");
    InstantSource clock = InstantSource.system();
    exposure = Exposure.open(config, self, binding.bindHost(), group, clock);
    adminToken = Tokens.readOrCreate(config.dataDir().resolve("admin.token"), "kadm");
    joinToken = Tokens.readOrCreate(config.dataDir().resolve("join.token"), "kjoin");
    var admin =
        new TokenRecord(Tokens.hash(adminToken), RunAsPolicy.BOOTSTRAP_ADMIN, TokenRecord.ADMIN, 0);
    var join = new TokenRecord(Tokens.hash(joinToken), "agent", TokenRecord.AGENT, 0);

    var meters = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    replica =
        new RaftReplica(
            self,
            peers,
            config.dataDir(),
            exposure.scheme(),
            exposure.raftTransport(config.security().raftTls()),
            config.join());
    accounting = Accounting.open(accountingSettings, config.dataDir(), replica, clock, meters);
    replica.start();
    batcher = new SubmitBatcher(replica, clock);
    scheduler = new SchedulerLoop(replica, config.policy(), config.tenancy(), clock, meters);
    scheduler.useAccounting(accounting.queries(), accounting.writer());
    tokenUses = new TokenUses();
    var identity =
        new NodeIdentity(
            exposure.clusterTls(),
            hash -> replica.stateMachine().read(st -> st.token(hash).isPresent()));
    long priorLeaseMs = PriorLeases.readAndRecord(config.dataDir(), config.lease());
    agents =
        new AgentService(
            replica,
            clock,
            config.detection(),
            config.lease(),
            priorLeaseMs,
            () -> {
              try {
                PriorLeases.settle(config.dataDir(), config.lease());
              } catch (IOException e) {
                LOG.warn("could not record the agents' lease: {}", e.toString());
              }
            },
            identity);
    scheduler.onStart(agents::premint);
    agents.exchanges().passesFrom(scheduler::awaitPass);
    agents.exchanges().register(meters);
    var utilization = new UtilizationHistory();
    sampler =
        new UtilizationSampler(
            replica, utilization, accounting.store(), clock, UtilizationSampler.DEFAULT_INTERVAL);
    registerGauges(meters);
    var services =
        new Services(
            replica,
            batcher,
            scheduler,
            agents,
            clock,
            meters,
            new AgentLogs(exposure.clusterTls()),
            utilization,
            new K8sExtender(
                config.kubeApi().or(() -> KubeApi.fromEnvironment(System.getenv())), clock),
            config.runAs(),
            exposure.caPem(),
            Safeguards.defaults(config.privateData(), scheduler::tenancy),
            exposure.clusterTls(),
            tokenUses,
            config.slurm(),
            accounting);
    services.safeguards().shedder().register(meters);
    var auth =
        new Authenticator(
            replica.stateMachine(),
            Map.of(admin.sha256(), admin, join.sha256(), join),
            clock,
            tokenUses);
    PeerAddress bound = self;
    http = Api.create(services, auth, c -> exposure.configure(c, bound.host(), bound.httpPort()));
    if (exposure.isHttps()) {
      http.start();
    } else {
      http.start(self.host(), self.httpPort());
    }
    scheduler.start();
    accounting.start();
    agents.start();
    sampler.start();
    tokenUses.startWriting(
        used -> replica.propose(new TokensUsed(clock.millis(), used)), TokenUses.EVERY);
    Limits defaults = services.safeguards().heapDefaults();
    bootstrapping = new Bootstrap(replica);
    bootstrap =
        Thread.ofVirtual()
            .name("kairos-bootstrap")
            .start(() -> bootstrapping.run(List.of(admin, join), defaults, config.tenancy()));
    LOG.info("controller {} serving {} (peers {})", self.id(), url(), peers);
    LOG.info(
        "controller {}: jobs run as their users' Unix accounts (the user table, by default the"
            + " same name); the bootstrap admin's run as {}; root jobs {}",
        self.id(),
        config.runAs().adminRunsAs(),
        config.runAs().allowRootJobs() ? "ALLOWED (--allow-root-jobs)" : "refused");
    warnings = exposure.warnings(config.security(), url(), self.raftPort());
    warnings.forEach(w -> LOG.warn("PLAIN TEXT: {}", w));
    LOG.info(
        "controller {} serving {} (peers {}; Raft on {}:{}, {})",
        self.id(),
        url(),
        peers,
        binding.bindHost(),
        self.raftPort(),
        config.security().raftTls() ? "mutual TLS" : "plain text");
  }

  public static Controller start(ControllerConfig config) throws IOException {
    return new Controller(config, AccountingSettings.defaults());
  }

  /** A replica whose ended jobs go to the accounting store {@code accounting} names. */
  public static Controller start(ControllerConfig config, AccountingSettings accounting)
      throws IOException {
    return new Controller(config, accounting);
  }

  private void registerGauges(PrometheusMeterRegistry meters) {
    new JvmMemoryMetrics().bindTo(meters);
    new JvmThreadMetrics().bindTo(meters);
    var sm = replica.stateMachine();
    Gauge.builder(
            "kairos.jobs.pending",
            sm,
            m -> m.read(s -> countJobs(s, io.kairos.protocol.JobState.PENDING)))
        .description("jobs waiting (queue depth)")
        .register(meters);
    Gauge.builder(
            "kairos.jobs.running",
            sm,
            m -> m.read(s -> countJobs(s, io.kairos.protocol.JobState.RUNNING)))
        .description("jobs running")
        .register(meters);
    sm.bindMetrics(meters);
    Gauge.builder("kairos.nodes", sm, m -> m.read(s -> (double) s.nodes().size()))
        .description("registered nodes")
        .register(meters);
    Gauge.builder("kairos.raft.applied.index", replica, r -> (double) r.appliedIndex())
        .description("the last log index applied on this replica (commits)")
        .register(meters);
    Gauge.builder("kairos.raft.leader", replica, r -> r.isLeader() ? 1 : 0)
        .description("1 on the leader")
        .register(meters);
  }

  private static double countJobs(
      io.kairos.control.state.ControlState s, io.kairos.protocol.JobState state) {
    long n = 0;
    for (var j : s.activeJobs()) {
      if (j.state == state) {
        n++;
      }
    }
    return n;
  }

  public int port() {
    return http.port();
  }

  public String url() {
    return exposure.scheme() + "://" + config.self().host() + ":" + port();
  }

  public String adminToken() {
    return adminToken;
  }

  public String joinToken() {
    return joinToken;
  }

  /**
   * Whether this replica's bootstrap is done: its data directory's tokens, the limits and the
   * {@code --tenancy} file's configuration are in the replicated state (tests wait for it, so that
   * no background commit lands in the middle of what they compare).
   */
  public boolean isBootstrapped() {
    return bootstrapping.isDone();
  }

  public RaftReplica replica() {
    return replica;
  }

  /**
   * The cluster CA's pin ({@code sha256:} of its public key), which agents check on first contact
   * ({@code kairos agent --ca-hash}); empty when this replica runs without one ({@code
   * --insecure}).
   */
  public Optional<String> caHash() {
    return exposure.caHash();
  }

  /** The replica's TLS identity, when it has one (tests rotate its certificate). */
  public Optional<io.kairos.control.tls.ClusterTls> clusterTls() {
    return exposure.clusterTls();
  }

  /** One line for each part that runs in plain text on a non-loopback address; empty if none. */
  public List<String> plainTextWarnings() {
    return warnings;
  }

  @Override
  public void close() throws IOException {
    var errors = new ArrayList<Exception>();
    bootstrap.interrupt();
    tokenUses.close();
    sampler.close();
    agents.close();
    scheduler.close();
    accounting.writer().close();
    batcher.close();
    try {
      http.stop();
    } catch (RuntimeException e) {
      errors.add(e);
    }
    replica.close();
    accounting.close();
    exposure.close();
    if (!errors.isEmpty()) {
      throw new IOException("controller did not stop cleanly", errors.get(0));
    }
  }
}

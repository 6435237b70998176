package io.kairos.control;

import io.kairos.config.SlurmNames;
import io.kairos.config.Tenancy;
import io.kairos.control.agent.LeaseSettings;
import io.kairos.control.auth.PrivateData;
import io.kairos.control.auth.RunAsPolicy;
import io.kairos.control.health.PhiAccrualDetector;
import io.kairos.control.k8s.KubeApi;
import io.kairos.control.raft.PeerAddress;
import io.kairos.core.sched.Policy;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * How one controller replica runs ({@link Controller#start}): its address and group, policy,
 * security, tenancy and the rest, from {@code kairos server}'s flags.
 *
 * @param dataDir this replica's directory (log, snapshots, tokens)
 * @param self this replica's address; HTTP port 0 picks free ports (single replica only)
 * @param peers the whole group, {@code self} included; empty for a single replica
 * @param tls an optional PKCS#12 keystore and its password for HTTPS
 * @param detection the agents' failure detector (phi threshold, window, minimum standard deviation,
 *     acceptable pause)
 * @param kubeApi the API server of the Kubernetes cluster the extender serves, if any
 * @param runAs which Unix account users' jobs run as, and whether root may be one
 * @param security TLS or plain text, the Raft bind address, the cluster CA's origin
 * @param privateData who may read a job's env, command, paths and logs (give every replica the
 *     same)
 * @param lease the agents' lease and the controller's margin on it ({@link LeaseSettings})
 * @param slurm the site's Slurm names: GPU type aliases, partitions as queues, whether an unknown
 *     QOS is an error (give every replica the same)
 * @param join this replica joins a group that already runs ({@code kairos server --join}): on an
 *     empty data directory it neither votes nor campaigns until a member adds it ({@code kairos
 *     replicas add}) and the leader has sent it the log
 */
public record ControllerConfig(
    Path dataDir,
    PeerAddress self,
    List<PeerAddress> peers,
    Policy policy,
    Optional<Controller.Tls> tls,
    PhiAccrualDetector.Settings detection,
    Optional<KubeApi> kubeApi,
    Optional<Tenancy> tenancy,
    RunAsPolicy runAs,
    NetworkSecurity security,
    PrivateData privateData,
    SlurmNames slurm,
    LeaseSettings lease,
    boolean join) {
  public ControllerConfig {
    java.util.Objects.requireNonNull(lease, "lease");
    peers = List.copyOf(peers);
    java.util.Objects.requireNonNull(runAs, "runAs");
    java.util.Objects.requireNonNull(security, "security");
    java.util.Objects.requireNonNull(privateData, "privateData");
    java.util.Objects.requireNonNull(slurm, "slurm");
  }

  /** The site's Slurm names ({@code kairos server --slurm-names FILE}); see {@link #slurm}. */
  public ControllerConfig withSlurm(SlurmNames names) {
    return new ControllerConfig(
        dataDir,
        self,
        peers,
        policy,
        tls,
        detection,
        kubeApi,
        tenancy,
        runAs,
        security,
        privateData,
        names,
        lease,
        join);
  }

  public ControllerConfig(
      Path dataDir,
      PeerAddress self,
      List<PeerAddress> peers,
      Policy policy,
      Optional<Controller.Tls> tls,
      PhiAccrualDetector.Settings detection,
      Optional<KubeApi> kubeApi,
      Optional<Tenancy> tenancy) {
    this(
        dataDir,
        self,
        peers,
        policy,
        tls,
        detection,
        kubeApi,
        tenancy,
        RunAsPolicy.serverDefaults(),
        NetworkSecurity.DEFAULT,
        PrivateData.OWNER,
        SlurmNames.DEFAULTS,
        LeaseSettings.DEFAULT,
        false);
  }

  public ControllerConfig(
      Path dataDir,
      PeerAddress self,
      List<PeerAddress> peers,
      Policy policy,
      Optional<Controller.Tls> tls,
      PhiAccrualDetector.Settings detection,
      Optional<KubeApi> kubeApi) {
    this(dataDir, self, peers, policy, tls, detection, kubeApi, Optional.empty());
  }

  /**
   * Multi-tenant scheduling (queues with quotas, priority classes, fair share, preemption), from a
   * tenancy file the CLI read ({@code kairos server --tenancy FILE}). In force until a version of
   * the replicated configuration exists; a file read from text ({@link Tenancy#yaml}) becomes that
   * version 1 on a data directory without one ({@code kairos config apply} changes it).
   */
  public ControllerConfig withTenancy(Tenancy setup) {
    return new ControllerConfig(
        dataDir,
        self,
        peers,
        policy,
        tls,
        detection,
        kubeApi,
        Optional.of(setup),
        runAs,
        security,
        privateData,
        slurm,
        lease,
        join);
  }

  /**
   * Who users' jobs run as: the bootstrap admin's account ({@code --admin-runs-as}) and whether
   * root jobs are allowed ({@code --allow-root-jobs}). Give every replica the same: the account is
   * decided by the replica that takes the submission, and recorded in the log.
   */
  public ControllerConfig withRunAs(RunAsPolicy runAs) {
    return new ControllerConfig(
        dataDir,
        self,
        peers,
        policy,
        tls,
        detection,
        kubeApi,
        tenancy,
        runAs,
        security,
        privateData,
        slurm,
        lease,
        join);
  }

  /**
   * The agents' lease and the margin before a lost node's GPUs go elsewhere ({@code kairos server
   * --lease, --lease-margin}); see {@link LeaseSettings}.
   */
  public ControllerConfig withLease(LeaseSettings lease) {
    return new ControllerConfig(
        dataDir,
        self,
        peers,
        policy,
        tls,
        detection,
        kubeApi,
        tenancy,
        runAs,
        security,
        privateData,
        slurm,
        lease,
        join);
  }

  /** Joins a group that already runs ({@code kairos server --join}); see {@link #join}. */
  public ControllerConfig withJoin(boolean join) {
    return new ControllerConfig(
        dataDir,
        self,
        peers,
        policy,
        tls,
        detection,
        kubeApi,
        tenancy,
        runAs,
        security,
        privateData,
        slurm,
        lease,
        join);
  }

  /** Who may read a job's private data ({@code kairos server --private-data}). */
  public ControllerConfig withPrivateData(PrivateData level) {
    return new ControllerConfig(
        dataDir, self, peers, policy, tls, detection, kubeApi, tenancy, runAs, security, level,
        slurm, lease, join);
  }

  public ControllerConfig(
      Path dataDir,
      PeerAddress self,
      List<PeerAddress> peers,
      Policy policy,
      Optional<Controller.Tls> tls) {
    this(
        dataDir,
        self,
        peers,
        policy,
        tls,
        PhiAccrualDetector.Settings.AKKA_DEFAULTS,
        Optional.empty());
  }

  public ControllerConfig withDetection(PhiAccrualDetector.Settings detection) {
    return new ControllerConfig(
        dataDir,
        self,
        peers,
        policy,
        tls,
        detection,
        kubeApi,
        tenancy,
        runAs,
        security,
        privateData,
        slurm,
        lease,
        join);
  }

  /** TLS or plain text, where Raft binds, the cluster CA's origin ({@link NetworkSecurity}). */
  public ControllerConfig withSecurity(NetworkSecurity s) {
    return new ControllerConfig(
        dataDir,
        self,
        peers,
        policy,
        tls,
        detection,
        kubeApi,
        tenancy,
        runAs,
        s,
        privateData,
        slurm,
        lease,
        join);
  }

  /**
   * The Kubernetes API server the extender binds pods through and lists nodes and pods from;
   * without one, {@code KAIROS_K8S_API} and {@code KAIROS_K8S_TOKEN_FILE} are read at start.
   */
  public ControllerConfig withKubeApi(KubeApi api) {
    return new ControllerConfig(
        dataDir,
        self,
        peers,
        policy,
        tls,
        detection,
        Optional.of(api),
        tenancy,
        runAs,
        security,
        privateData,
        slurm,
        lease,
        join);
  }

  public static ControllerConfig single(Path dataDir, String host, int port) {
    return new ControllerConfig(
        dataDir,
        new PeerAddress(host, port, port == 0 ? 0 : port + PeerAddress.RAFT_PORT_OFFSET),
        List.of(),
        Policy.KAIROS,
        Optional.empty());
  }
}

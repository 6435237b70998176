package io.kairos.control.api;

import io.kairos.config.SlurmNames;
import io.kairos.control.agent.AgentLogs;
import io.kairos.control.agent.AgentService;
import io.kairos.control.auth.RunAsPolicy;
import io.kairos.control.auth.TokenUses;
import io.kairos.control.dashboard.UtilizationHistory;
import io.kairos.control.k8s.K8sExtender;
import io.kairos.control.raft.RaftReplica;
import io.kairos.control.raft.SubmitBatcher;
import io.kairos.control.sched.SchedulerLoop;
import io.kairos.control.state.ControlCommand;
import io.kairos.control.state.ControlResult;
import io.kairos.control.state.ControlState;
import io.kairos.control.tls.ClusterTls;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.InstantSource;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * What the routes call: the replica (state and log), the batcher, the scheduler, the agents and
 * their logs, the utilization history, the kube-scheduler extender, who users' jobs run as, the
 * cluster CA's certificates (PEM) when the replica has one, the safeguards (privacy, rates,
 * budgets), the cluster CA itself (to certify an extender's key), the tokens' uses not yet written
 * to the log, the site's Slurm names, and the accounting store (ended jobs' history).
 */
public record Services(
    RaftReplica replica,
    SubmitBatcher batcher,
    SchedulerLoop scheduler,
    AgentService agents,
    InstantSource clock,
    PrometheusMeterRegistry meters,
    AgentLogs logs,
    UtilizationHistory utilization,
    K8sExtender k8s,
    RunAsPolicy runAs,
    Optional<String> caPem,
    Safeguards safeguards,
    Optional<ClusterTls> clusterTls,
    TokenUses tokenUses,
    SlurmNames slurm,
    io.kairos.control.accounting.Accounting accounting) {

  static final long COMMIT_TIMEOUT_SEC = 10;

  <T> T read(Function<ControlState, T> reader) {
    return replica.stateMachine().read(reader);
  }

  /** Proposes a command and waits for it to apply; 503 when no leader commits it in time. */
  ControlResult commit(ControlCommand command) {
    try {
      return replica.propose(command).get(COMMIT_TIMEOUT_SEC, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw ApiError.unavailable("interrupted while committing");
    } catch (ExecutionException | TimeoutException e) {
      throw ApiError.unavailable(
          "the change was not committed (no leader reachable?): " + e.getMessage());
    }
  }

  static ControlResult check(ControlResult r) {
    return switch (r.status()) {
      case 200 -> r;
      case 404 -> throw ApiError.notFound(r.error());
      case 409 -> throw ApiError.conflict(r.error());
      default -> throw new IllegalStateException("unexpected result " + r);
    };
  }
}

package io.kairos.protocol.agent;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.kairos.protocol.GpuDevice;
import java.util.List;
import java.util.Map;

/**
 * An agent announces its node. Registering again (after a restart) starts a new epoch: the
 * controller fences the old one.
 *
 * @param address the base URL of the agent's own HTTP server (task logs), e.g. {@code
 *     http://127.0.0.1:7101}
 * @param nvlinkDomainSize GPUs per NVLink domain (equal to the GPU count when all share one)
 * @param logToken a secret the agent made for this registration: its log server accepts it as a
 *     bearer token, so any controller replica can fetch task logs; null to accept the join token
 * @param runsOnlyAs null when the agent can start tasks as any account (it runs as root); else the
 *     one Unix account it runs as, whose jobs alone it can run
 * @param credential what the node proves itself with from now on ({@link NodeCredential}); sent
 *     with every registration, and never stored: the controller keeps a hash of it with the node
 * @param tasks the tasks a restarted agent adopted from its predecessor (running, or ended while no
 *     agent watched them): the controller keeps them, and their jobs, as they were, instead of
 *     counting them lost; null or empty for none. Not stored with the node
 */
public record Registration(
    String node,
    String address,
    List<GpuDevice> gpus,
    int cpus,
    long memoryBytes,
    Map<String, String> labels,
    String zone,
    String block,
    String rack,
    int nvlinkDomainSize,
    String logToken,
    @JsonInclude(JsonInclude.Include.NON_NULL) String runsOnlyAs,
    @JsonInclude(JsonInclude.Include.NON_NULL) NodeCredential credential,
    @JsonInclude(JsonInclude.Include.NON_EMPTY) List<TaskReport> tasks) {

  public Registration {
    tasks = tasks == null || tasks.isEmpty() ? null : List.copyOf(tasks);
  }

  /** A registration that adopted no task. */
  public Registration(
      String node,
      String address,
      List<GpuDevice> gpus,
      int cpus,
      long memoryBytes,
      Map<String, String> labels,
      String zone,
      String block,
      String rack,
      int nvlinkDomainSize,
      String logToken,
      String runsOnlyAs,
      NodeCredential credential) {
    this(
        node,
        address,
        gpus,
        cpus,
        memoryBytes,
        labels,
        zone,
        block,
        rack,
        nvlinkDomainSize,
        logToken,
        runsOnlyAs,
        credential,
        null);
  }

  /** This registration reporting {@code adopted} tasks (null: none), as the agent sends it. */
  public Registration withTasks(List<TaskReport> adopted) {
    return new Registration(
        node,
        address,
        gpus,
        cpus,
        memoryBytes,
        labels,
        zone,
        block,
        rack,
        nvlinkDomainSize,
        logToken,
        runsOnlyAs,
        credential,
        adopted);
  }

  /** A registration without a credential (before nodes had their own). */
  public Registration(
      String node,
      String address,
      List<GpuDevice> gpus,
      int cpus,
      long memoryBytes,
      Map<String, String> labels,
      String zone,
      String block,
      String rack,
      int nvlinkDomainSize,
      String logToken,
      String runsOnlyAs) {
    this(
        node,
        address,
        gpus,
        cpus,
        memoryBytes,
        labels,
        zone,
        block,
        rack,
        nvlinkDomainSize,
        logToken,
        runsOnlyAs,
        (NodeCredential) null);
  }

  /** This registration with {@code token} as its log secret. */
  public Registration withLogToken(String token) {
    return new Registration(
        node,
        address,
        gpus,
        cpus,
        memoryBytes,
        labels,
        zone,
        block,
        rack,
        nvlinkDomainSize,
        token,
        runsOnlyAs,
        credential,
        tasks);
  }

  /** This registration with {@code c} as its credential. */
  public Registration withCredential(NodeCredential c) {
    return new Registration(
        node,
        address,
        gpus,
        cpus,
        memoryBytes,
        labels,
        zone,
        block,
        rack,
        nvlinkDomainSize,
        logToken,
        runsOnlyAs,
        c,
        tasks);
  }

  /** A registration of an agent that does not say which accounts it can run (before that field). */
  public Registration(
      String node,
      String address,
      List<GpuDevice> gpus,
      int cpus,
      long memoryBytes,
      Map<String, String> labels,
      String zone,
      String block,
      String rack,
      int nvlinkDomainSize,
      String logToken) {
    this(
        node,
        address,
        gpus,
        cpus,
        memoryBytes,
        labels,
        zone,
        block,
        rack,
        nvlinkDomainSize,
        logToken,
        null);
  }

  /** A registration whose log server accepts the join token. */
  public Registration(
      String node,
      String address,
      List<GpuDevice> gpus,
      int cpus,
      long memoryBytes,
      Map<String, String> labels,
      String zone,
      String block,
      String rack,
      int nvlinkDomainSize) {
    this(node, address, gpus, cpus, memoryBytes, labels, zone, block, rack, nvlinkDomainSize, null);
  }
}

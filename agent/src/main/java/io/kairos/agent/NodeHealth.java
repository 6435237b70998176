package io.kairos.agent;

import io.kairos.agent.gpu.Discovery;
import io.kairos.agent.gpu.GpuInventory;
import io.kairos.agent.gpu.HealthCheckProgram;
import io.kairos.agent.gpu.HealthChecker;
import io.kairos.agent.gpu.HealthPolicy;
import io.kairos.agent.gpu.HealthProblem;
import io.kairos.agent.gpu.HealthReport;
import io.kairos.agent.gpu.NvidiaSmi;
import io.kairos.agent.gpu.NvidiaSmiException;
import io.kairos.protocol.GpuDevice;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's GPUs and their health, as the agent registers and reports them.
 *
 * <p>With an nvidia-smi binary, the GPUs come from discovery at start (the <em>baseline</em>), and
 * each check runs nvidia-smi again and compares: ECC counts rising, a GPU missing or lost, a
 * temperature at its slowdown threshold, pending page retirements. Without one (emulated GPUs),
 * only the site's check program runs. A check runs every health interval and before each task
 * starts; its problems ride on every heartbeat until a check finds none, and the controller drains
 * the node while there are any.
 *
 * <p>Thread-safe: checks may run on the ticker and on a launch at once; the latest result is a
 * volatile reference.
 */
public final class NodeHealth {
  private static final Logger log = LoggerFactory.getLogger(NodeHealth.class);

  private final Optional<Discovery> discovery;
  private final GpuInventory baseline;
  private final HealthChecker checker = new HealthChecker(HealthPolicy.DEFAULTS);
  private final List<HealthCheckProgram> programs;
  private volatile List<String> latest = List.of();

  private NodeHealth(
      Optional<Discovery> discovery, GpuInventory baseline, List<HealthCheckProgram> programs) {
    this.discovery = discovery;
    this.baseline = baseline;
    this.programs = programs;
  }

  /**
   * Discovers the node's GPUs when the config names nvidia-smi.
   *
   * @throws NvidiaSmiException when discovery fails: the agent must not register GPUs it cannot see
   *     (the message names the command, its exit code and its first error line)
   */
  public static NodeHealth of(AgentConfig config) throws NvidiaSmiException {
    var programs = new ArrayList<HealthCheckProgram>();
    if (!config.healthCheckProgram().isEmpty()) {
      programs.add(
          new HealthCheckProgram(config.healthCheckProgram(), Map.of(), Duration.ofSeconds(60)));
    }
    if (config.nvidiaSmi() == null) {
      return new NodeHealth(Optional.empty(), null, List.copyOf(programs));
    }
    var discovery =
        new Discovery(new NvidiaSmi(config.nvidiaSmi(), Map.of(), Duration.ofSeconds(30)));
    GpuInventory inventory = discovery.discover();
    for (String w : inventory.warnings()) {
      log.warn("GPU discovery: {}", w);
    }
    log.info(
        "discovered {} GPU(s), driver {}, NVLink domain size {}: {}",
        inventory.gpuCount(),
        inventory.driverVersion(),
        inventory.nvlinkDomainSize(),
        inventory.gpus().stream().map(g -> g.label()).toList());
    return new NodeHealth(Optional.of(discovery), inventory, List.copyOf(programs));
  }

  /** The discovered GPUs; empty when emulating. */
  public Optional<GpuInventory> inventory() {
    return Optional.ofNullable(baseline);
  }

  /** The GPUs to register: discovered ones, or the emulated ones of the config. */
  public List<GpuDevice> devices(AgentConfig config) {
    return baseline != null ? baseline.devices() : config.gpus().devices(config.nodeName());
  }

  public int nvlinkDomainSize(AgentConfig config) {
    return baseline != null ? baseline.nvlinkDomainSize() : config.effectiveNvlinkDomainSize();
  }

  /** Whether a check has anything to run. */
  public boolean checks() {
    return discovery.isPresent() || !programs.isEmpty();
  }

  /** Runs every check now; returns the problems (empty when healthy) and keeps them as latest. */
  public List<String> checkNow() {
    if (!checks()) {
      return List.of();
    }
    HealthReport report = HealthReport.HEALTHY;
    if (discovery.isPresent()) {
      report = checker.check(baseline, discovery.get().run());
    }
    for (HealthCheckProgram program : programs) {
      report = report.and(program.run());
    }
    List<String> problems = report.problems().stream().map(HealthProblem::reason).toList();
    if (!problems.equals(latest)) {
      if (problems.isEmpty()) {
        log.info("health: the node is healthy again");
      } else {
        log.warn("health: {}", problems);
      }
    }
    latest = problems;
    return problems;
  }

  /** The problems the last check found. */
  public List<String> latest() {
    return latest;
  }
}

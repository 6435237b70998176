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
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's GPUs and their health, as the agent registers and reports them.
 *
 * <p>With an nvidia-smi binary, the GPUs come from discovery at start (the <em>baseline</em>), and
 * each check runs nvidia-smi again and compares: ECC counts rising, a GPU missing or lost, a
 * temperature at its slowdown threshold, pending page retirements. Without one (emulated GPUs),
 * only the site's check program runs, plus the faults file that {@value #EMULATED_FAULTS_ENV} names
 * (tests fail single emulated GPUs with it). A check runs every health interval and before each
 * task starts; its problems ride on every heartbeat until a check finds none.
 *
 * <p>Problems come in two kinds. Those of the node as a whole (nvidia-smi failing: the driver; a
 * GPU that appeared; the site's check program, which covers what the agent cannot see, such as the
 * NVLink fabric) refuse every launch and make the controller drain the node. Those of one GPU (ECC
 * errors, a pending repair, heat, a GPU lost or missing) are reported by GPU index ({@link
 * #latestGpuProblems}): the controller takes that GPU out of service alone, and launches go on.
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
  private final EmulatedFaults faults;
  private volatile List<String> latest = List.of();
  private volatile Map<Integer, String> latestGpus = Map.of();

  /**
   * The environment variable naming a file of emulated GPU faults: one {@code INDEX [REASON]} line
   * per unhealthy GPU ({@code 2 XID 48: double-bit ECC error}); read at every check, only when the
   * GPUs are emulated (never over real ones).
   */
  public static final String EMULATED_FAULTS_ENV = "KAIROS_EMULATED_GPU_FAULTS";

  private NodeHealth(
      Optional<Discovery> discovery,
      GpuInventory baseline,
      List<HealthCheckProgram> programs,
      EmulatedFaults faults) {
    this.discovery = discovery;
    this.baseline = baseline;
    this.programs = programs;
    this.faults = faults;
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
      String file = System.getenv(EMULATED_FAULTS_ENV);
      EmulatedFaults faults =
          file == null || file.isBlank()
              ? null
              : new EmulatedFaults(java.nio.file.Path.of(file), config.gpus().count());
      return new NodeHealth(Optional.empty(), null, List.copyOf(programs), faults);
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
    return new NodeHealth(Optional.of(discovery), inventory, List.copyOf(programs), null);
  }

  /** Emulated GPUs whose faults {@code file} lists (tests: without the environment variable). */
  static NodeHealth emulated(java.nio.file.Path file, int gpuCount) {
    return new NodeHealth(Optional.empty(), null, List.of(), new EmulatedFaults(file, gpuCount));
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
    return discovery.isPresent() || !programs.isEmpty() || faults != null;
  }

  /**
   * Runs every check now; returns the problems of the node as a whole (empty when none) and keeps
   * them, and those of single GPUs, as the latest.
   */
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
    if (faults != null) {
      report = report.and(faults.read());
    }
    var nodeWide = new ArrayList<String>();
    var byGpu = new TreeMap<Integer, String>();
    for (HealthProblem p : report.problems()) {
      if (p.gpuIndex() == HealthProblem.NODE) {
        nodeWide.add(p.reason());
      } else {
        byGpu.merge(p.gpuIndex(), p.reason(), (a, b) -> a + "; " + b);
      }
    }
    List<String> problems = List.copyOf(nodeWide);
    Map<Integer, String> gpus = Collections.unmodifiableMap(byGpu);
    if (!problems.equals(latest) || !gpus.equals(latestGpus)) {
      if (problems.isEmpty() && gpus.isEmpty()) {
        log.info("health: the node is healthy again");
      } else {
        log.warn("health: node {}, GPUs {}", problems, gpus);
      }
    }
    latestGpus = gpus;
    latest = problems;
    return problems;
  }

  /** The problems of the node as a whole that the last check found. */
  public List<String> latest() {
    return latest;
  }

  /** The problems of single GPUs that the last check found, by GPU index (empty when none). */
  public Map<Integer, String> latestGpuProblems() {
    return latestGpus;
  }
}

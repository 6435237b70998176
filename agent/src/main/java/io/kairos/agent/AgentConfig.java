package io.kairos.agent;

import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Everything an agent is started with. The canonical constructor validates every field and throws
 * {@link IllegalArgumentException} naming the field; {@link #builder} fills defaults.
 *
 * <p>Immutable. {@link #toString} hides the join token.
 *
 * @param controllers base URLs of the controller replicas ({@code http://host:port}), tried in
 *     order; at least one
 * @param joinToken the join token a node registers with the first time (or after an admin's reset);
 *     null when the data directory holds the node's own credential already, with which it registers
 *     again
 * @param nodeName the node's name: letters, digits, '.', '_' or '-'
 * @param dataDir where task directories ({@code tasks/<job>-<attempt>-<task>/}) are created
 * @param gpus the emulated GPUs to advertise
 * @param nvlinkDomainSize GPUs per NVLink domain, dividing the GPU count; 0 when all the node's
 *     GPUs share one
 * @param cpus CPUs to advertise
 * @param memoryBytes memory to advertise
 * @param listenHost the address the log server binds ({@code 127.0.0.1} by default)
 * @param listenPort the log server's port; 0 for any free port
 * @param labels extra node labels for the controller
 * @param heartbeatWaitMs how long the controller may hold a heartbeat reply (long poll)
 * @param killGraceMs how long a task gets between SIGTERM and SIGKILL
 * @param maxTaskOutputBytes a task whose stdout and stderr together grow past this is stopped
 *     (reason {@code OUTPUT_LIMIT}); 0 for no limit
 * @param nvidiaSmi the nvidia-smi binary to discover real GPUs with (and check their health); null
 *     to emulate {@code gpus} instead
 * @param healthCheckProgram a site check run with every health check (Slurm's HealthCheckProgram,
 *     NHC): exit 0 is healthy, anything else drains the node with the first line it printed; empty
 *     for none
 * @param healthIntervalMs how often the node's health is checked (it is also checked before each
 *     task starts)
 * @param cgroups whether to put each task in a cgroup of its own with CPU, memory and pids limits,
 *     where the kernel lets the agent write them
 * @param fenceWatchdog whether to run the fence watchdog, a small process that kills the tasks when
 *     the lease runs out even if the agent itself is frozen or dead
 * @param fenceMarginMs how long before its lease runs out the agent and its fence watchdog kill the
 *     tasks, so that they are dead by the lease's end (the watchdog's tick, the kill itself); at
 *     most a quarter of the lease is taken
 * @param allowRootJobs whether tasks may run as root (uid 0); off, a task whose account is root is
 *     refused (it fails with a message saying so)
 * @param caFile the CA (PEM) the controllers' certificates must chain to, pinned with {@code
 *     --ca-hash} or given with {@code --ca}; null to trust the JDK's CAs ({@link ControllerTrust})
 * @param insecure whether the join token may travel in clear to a non-loopback {@code http://}
 *     controller
 * @param checkpointS3Endpoint the S3-compatible endpoint the tasks of jobs that keep their
 *     checkpoints in object storage are told ({@code KAIROS_S3_ENDPOINT}); null for the SDKs'
 *     default (AWS)
 */
public record AgentConfig(
    List<String> controllers,
    String joinToken,
    String nodeName,
    Path dataDir,
    EmulatedGpus gpus,
    int nvlinkDomainSize,
    int cpus,
    long memoryBytes,
    String listenHost,
    int listenPort,
    String zone,
    String block,
    String rack,
    Map<String, String> labels,
    long heartbeatWaitMs,
    long killGraceMs,
    long maxTaskOutputBytes,
    String nvidiaSmi,
    List<String> healthCheckProgram,
    long healthIntervalMs,
    boolean cgroups,
    boolean fenceWatchdog,
    long fenceMarginMs,
    boolean allowRootJobs,
    Path caFile,
    boolean insecure,
    String checkpointS3Endpoint) {

  public static final long MAX_HEARTBEAT_WAIT_MS = 60_000;
  public static final long MAX_KILL_GRACE_MS = 3_600_000;
  public static final long MAX_FENCE_MARGIN_MS = 60_000;
  public static final long DEFAULT_FENCE_MARGIN_MS = 250;

  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._\\-]{0,62}");

  public AgentConfig {
    controllers = validControllers(controllers);
    if (joinToken != null && joinToken.isBlank()) {
      throw new IllegalArgumentException(
          "joinToken must not be empty (the cluster's join token), or absent");
    }
    nodeName = validName(nodeName, "nodeName");
    if (checkpointS3Endpoint != null) {
      checkpointS3Endpoint = baseUrl(checkpointS3Endpoint, "checkpointS3Endpoint");
    }
    Objects.requireNonNull(dataDir, "dataDir");
    Objects.requireNonNull(gpus, "gpus");
    if (nvlinkDomainSize < 0
        || nvlinkDomainSize > gpus.count()
        || (nvlinkDomainSize > 0 && gpus.count() % nvlinkDomainSize != 0)) {
      throw new IllegalArgumentException(
          "nvlinkDomainSize must divide the GPU count "
              + gpus.count()
              + " (0: one domain for all), got "
              + nvlinkDomainSize);
    }
    positive(cpus, "cpus");
    positive(memoryBytes, "memoryBytes");
    if (listenHost == null || listenHost.isBlank()) {
      throw new IllegalArgumentException("listenHost must not be empty (e.g. 127.0.0.1)");
    }
    if (listenPort < 0 || listenPort > 65_535) {
      throw new IllegalArgumentException(
          "listenPort must be between 0 and 65535 (0: any free port), got " + listenPort);
    }
    zone = validName(zone, "zone");
    block = validName(block, "block");
    rack = validName(rack, "rack");
    labels = Map.copyOf(Objects.requireNonNull(labels, "labels"));
    inRange(heartbeatWaitMs, 0, MAX_HEARTBEAT_WAIT_MS, "heartbeatWaitMs");
    inRange(killGraceMs, 0, MAX_KILL_GRACE_MS, "killGraceMs");
    inRange(fenceMarginMs, 0, MAX_FENCE_MARGIN_MS, "fenceMarginMs");
    inRange(maxTaskOutputBytes, 0, Long.MAX_VALUE, "maxTaskOutputBytes");
    if (nvidiaSmi != null && nvidiaSmi.isBlank()) {
      throw new IllegalArgumentException("nvidiaSmi must name the nvidia-smi binary, or be absent");
    }
    healthCheckProgram =
        List.copyOf(Objects.requireNonNull(healthCheckProgram, "healthCheckProgram"));
    inRange(healthIntervalMs, 1_000, 86_400_000, "healthIntervalMs");
  }

  /** A builder with the required fields; every other field has a default. */
  public static Builder builder(
      List<String> controllers, String joinToken, String nodeName, Path dataDir) {
    return new Builder(controllers, joinToken, nodeName, dataDir);
  }

  /**
   * Splits a comma-separated list of controller URLs ({@code http://a:7000,http://b:7000}), as a
   * command line or an environment variable gives it.
   */
  public static List<String> parseControllers(String commaSeparated) {
    if (commaSeparated == null || commaSeparated.isBlank()) {
      throw new IllegalArgumentException(
          "controllers must not be empty (example: http://127.0.0.1:7000)");
    }
    List<String> urls = new ArrayList<>();
    for (String url : commaSeparated.split(",", -1)) {
      urls.add(url.strip());
    }
    return urls;
  }

  /** The GPU count to report as the NVLink domain size: all GPUs when 0 was configured. */
  public int effectiveNvlinkDomainSize() {
    return nvlinkDomainSize == 0 ? gpus.count() : nvlinkDomainSize;
  }

  @Override
  public String toString() {
    return ("AgentConfig[controllers=%s, joinToken=***, nodeName=%s, dataDir=%s, gpus=%s,"
            + " cpus=%d, memoryBytes=%d, listen=%s:%d, zone=%s, block=%s, rack=%s,"
            + " heartbeatWaitMs=%d, killGraceMs=%d, maxTaskOutputBytes=%d, caFile=%s,"
            + " insecure=%s, checkpointS3Endpoint=%s]")
        .formatted(
            controllers,
            nodeName,
            dataDir,
            gpus,
            cpus,
            memoryBytes,
            listenHost,
            listenPort,
            zone,
            block,
            rack,
            heartbeatWaitMs,
            killGraceMs,
            maxTaskOutputBytes,
            caFile,
            insecure,
            checkpointS3Endpoint);
  }

  private static List<String> validControllers(List<String> controllers) {
    if (controllers == null || controllers.isEmpty()) {
      throw new IllegalArgumentException(
          "controllers must not be empty (example: http://127.0.0.1:7000)");
    }
    List<String> urls = new ArrayList<>();
    for (int i = 0; i < controllers.size(); i++) {
      urls.add(baseUrl(controllers.get(i), "controllers[" + i + "]"));
    }
    return List.copyOf(urls);
  }

  /**
   * Checks that {@code url} is an {@code http(s)://host[:port]} base URL and returns it without a
   * trailing slash.
   */
  static String baseUrl(String url, String field) {
    if (url == null || url.isBlank()) {
      throw new IllegalArgumentException(
          field + " must not be empty (example: http://127.0.0.1:7000)");
    }
    String stripped = url.strip();
    while (stripped.endsWith("/")) {
      stripped = stripped.substring(0, stripped.length() - 1);
    }
    URI uri;
    try {
      uri = new URI(stripped);
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException(
          field + ": '" + url + "' is not a URL (example: http://127.0.0.1:7000)", e);
    }
    String scheme = uri.getScheme();
    if (scheme == null
        || !(scheme.equals("http") || scheme.equals("https"))
        || uri.getHost() == null) {
      throw new IllegalArgumentException(
          field
              + ": '"
              + url
              + "' is not an http(s)://host:port URL (example: http://127.0.0.1:7000)");
    }
    if (uri.getQuery() != null || uri.getFragment() != null) {
      throw new IllegalArgumentException(
          field + ": '" + url + "' must be a base URL, without query or fragment");
    }
    return stripped;
  }

  private static String validName(String value, String field) {
    if (value == null || !NAME.matcher(value).matches()) {
      throw new IllegalArgumentException(
          field
              + ": '"
              + value
              + "' must be 1 to 63 letters, digits, '.', '_' or '-', starting with a letter or"
              + " digit");
    }
    return value;
  }

  private static void positive(long value, String field) {
    if (value <= 0) {
      throw new IllegalArgumentException(field + " must be > 0, got " + value);
    }
  }

  private static void inRange(long value, long min, long max, String field) {
    if (value < min || value > max) {
      throw new IllegalArgumentException(
          field + " must be between " + min + " and " + max + ", got " + value);
    }
  }

  /** Fills {@link AgentConfig}'s defaults; {@link #build} validates. Not thread-safe. */
  public static final class Builder {
    private final List<String> controllers;
    private final String joinToken;
    private final String nodeName;
    private final Path dataDir;
    private EmulatedGpus gpus = EmulatedGpus.NONE;
    private int nvlinkDomainSize;
    private int cpus = Runtime.getRuntime().availableProcessors();
    private long memoryBytes = physicalMemoryBytes();
    private String listenHost = "127.0.0.1";
    private int listenPort;
    private String zone = "zone-0";
    private String block = "block-0";
    private String rack = "rack-0";
    private final Map<String, String> labels = new LinkedHashMap<>();
    private long heartbeatWaitMs = 1_000;
    private long killGraceMs = 10_000;
    private long maxTaskOutputBytes;
    private String nvidiaSmi;
    private List<String> healthCheckProgram = List.of();
    private long healthIntervalMs = 30_000;
    private boolean cgroups = true;
    private boolean fenceWatchdog = true;
    private long fenceMarginMs = DEFAULT_FENCE_MARGIN_MS;
    private boolean allowRootJobs;
    private Path caFile;
    private boolean insecure;
    private String checkpointS3Endpoint;

    private Builder(List<String> controllers, String joinToken, String nodeName, Path dataDir) {
      this.controllers = controllers;
      this.joinToken = joinToken;
      this.nodeName = nodeName;
      this.dataDir = dataDir;
    }

    public Builder gpus(EmulatedGpus gpus) {
      this.gpus = gpus;
      return this;
    }

    /** Parses the GPU spec with {@link EmulatedGpus#parse}. */
    public Builder gpus(String spec) {
      return gpus(EmulatedGpus.parse(spec));
    }

    public Builder nvlinkDomainSize(int nvlinkDomainSize) {
      this.nvlinkDomainSize = nvlinkDomainSize;
      return this;
    }

    public Builder cpus(int cpus) {
      this.cpus = cpus;
      return this;
    }

    public Builder memoryBytes(long memoryBytes) {
      this.memoryBytes = memoryBytes;
      return this;
    }

    public Builder listen(String host, int port) {
      this.listenHost = host;
      this.listenPort = port;
      return this;
    }

    public Builder topology(String zone, String block, String rack) {
      this.zone = zone;
      this.block = block;
      this.rack = rack;
      return this;
    }

    public Builder label(String key, String value) {
      labels.put(key, value);
      return this;
    }

    public Builder heartbeatWaitMs(long heartbeatWaitMs) {
      this.heartbeatWaitMs = heartbeatWaitMs;
      return this;
    }

    public Builder killGraceMs(long killGraceMs) {
      this.killGraceMs = killGraceMs;
      return this;
    }

    public Builder maxTaskOutputBytes(long maxTaskOutputBytes) {
      this.maxTaskOutputBytes = maxTaskOutputBytes;
      return this;
    }

    /** Discover GPUs with this nvidia-smi rather than emulating them. */
    public Builder nvidiaSmi(String binary) {
      this.nvidiaSmi = binary;
      return this;
    }

    public Builder healthCheckProgram(List<String> argv) {
      this.healthCheckProgram = argv;
      return this;
    }

    public Builder healthIntervalMs(long healthIntervalMs) {
      this.healthIntervalMs = healthIntervalMs;
      return this;
    }

    public Builder cgroups(boolean cgroups) {
      this.cgroups = cgroups;
      return this;
    }

    /** See {@link AgentConfig#fenceMarginMs}. */
    public Builder fenceMarginMs(long fenceMarginMs) {
      this.fenceMarginMs = fenceMarginMs;
      return this;
    }

    public Builder fenceWatchdog(boolean fenceWatchdog) {
      this.fenceWatchdog = fenceWatchdog;
      return this;
    }

    public Builder allowRootJobs(boolean allowRootJobs) {
      this.allowRootJobs = allowRootJobs;
      return this;
    }

    /** Verify the controllers against the CA in this PEM file (and refuse plain HTTP). */
    public Builder caFile(Path file) {
      this.caFile = file;
      return this;
    }

    /** Let the join token travel in clear to a non-loopback {@code http://} controller. */
    public Builder insecure(boolean insecure) {
      this.insecure = insecure;
      return this;
    }

    /** Tell checkpointing tasks this S3-compatible endpoint ({@code KAIROS_S3_ENDPOINT}). */
    public Builder checkpointS3Endpoint(String url) {
      this.checkpointS3Endpoint = url;
      return this;
    }

    public AgentConfig build() {
      return new AgentConfig(
          controllers,
          joinToken,
          nodeName,
          dataDir,
          gpus,
          nvlinkDomainSize,
          cpus,
          memoryBytes,
          listenHost,
          listenPort,
          zone,
          block,
          rack,
          labels,
          heartbeatWaitMs,
          killGraceMs,
          maxTaskOutputBytes,
          nvidiaSmi,
          healthCheckProgram,
          healthIntervalMs,
          cgroups,
          fenceWatchdog,
          fenceMarginMs,
          allowRootJobs,
          caFile,
          insecure,
          checkpointS3Endpoint);
    }

    private static long physicalMemoryBytes() {
      if (ManagementFactory.getOperatingSystemMXBean()
          instanceof com.sun.management.OperatingSystemMXBean os) {
        return os.getTotalMemorySize();
      }
      return Runtime.getRuntime().maxMemory();
    }
  }
}

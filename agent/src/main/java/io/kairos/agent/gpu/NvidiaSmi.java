package io.kairos.agent.gpu;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Runs the {@code nvidia-smi} binary for the three queries discovery needs and returns the raw
 * output; parsing lives in {@link SmiXmlParser}, {@link QueryCsvParser} and {@link Topology}, so
 * that it can be tested on recorded samples without a process.
 *
 * <p>The binary is a path or a bare name looked up on {@code PATH}. {@code extraEnv} is added to
 * the agent's environment (tests use it to hand a fake nvidia-smi its fixture directory). Every run
 * is bounded by {@code timeout} and killed when it passes it: a wedged driver makes nvidia-smi
 * hang, and a health check must not hang with it. Immutable and thread-safe.
 *
 * @param binary the nvidia-smi program, {@code "nvidia-smi"} by default
 * @param extraEnv variables added to the inherited environment
 * @param timeout the most one run may take
 */
public record NvidiaSmi(String binary, Map<String, String> extraEnv, Duration timeout) {
  public static final String DEFAULT_BINARY = "nvidia-smi";
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);

  /** The fields {@link #queryCsv()} asks for, in the order {@link QueryCsvParser} reads them. */
  public static final String QUERY_FIELDS =
      "index,uuid,name,memory.total,pci.bus_id,temperature.gpu,"
          + "ecc.errors.uncorrected.volatile.total,retired_pages.pending";

  public static final List<String> QUERY_CSV_ARGS =
      List.of("--query-gpu=" + QUERY_FIELDS, "--format=csv,noheader,nounits");
  public static final List<String> QUERY_XML_ARGS = List.of("-q", "-x");
  public static final List<String> TOPOLOGY_ARGS = List.of("topo", "-m");

  public NvidiaSmi {
    Objects.requireNonNull(binary, "nvidiaSmi.binary");
    if (binary.isBlank()) {
      throw new IllegalArgumentException("nvidiaSmi.binary must not be blank");
    }
    extraEnv = Map.copyOf(extraEnv);
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("nvidiaSmi.timeout must be > 0, got " + timeout);
    }
  }

  /** {@code nvidia-smi} on {@code PATH}, no extra environment, a 10 s timeout. */
  public static NvidiaSmi onPath() {
    return new NvidiaSmi(DEFAULT_BINARY, Map.of(), DEFAULT_TIMEOUT);
  }

  /** {@code nvidia-smi --query-gpu=... --format=csv,noheader,nounits}. */
  public CommandResult queryCsv() throws IOException {
    return run(QUERY_CSV_ARGS);
  }

  /** {@code nvidia-smi -q -x}: the full XML report. */
  public CommandResult queryXml() throws IOException {
    return run(QUERY_XML_ARGS);
  }

  /** {@code nvidia-smi topo -m}: the connectivity matrix. */
  public CommandResult topology() throws IOException {
    return run(TOPOLOGY_ARGS);
  }

  /**
   * Runs nvidia-smi with {@code args}.
   *
   * @throws IOException when the binary cannot be started; the message names it
   */
  public CommandResult run(List<String> args) throws IOException {
    List<String> argv = new ArrayList<>(args.size() + 1);
    argv.add(binary);
    argv.addAll(args);
    return CommandRunner.run(argv, extraEnv, timeout);
  }
}

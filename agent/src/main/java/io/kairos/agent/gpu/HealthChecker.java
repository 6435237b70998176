package io.kairos.agent.gpu;

import io.kairos.agent.gpu.HealthProblem.Kind;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Compares what nvidia-smi says now with the inventory taken at registration.
 *
 * <p>Pure: it takes values (the baseline, a {@link Discovery.Result}) and returns a {@link
 * HealthReport}; running processes is {@link HealthProbe}'s job. GPUs are matched by UUID, not
 * index, because nvidia-smi renumbers the survivors when a GPU falls off the bus. Problems name the
 * GPU by its index at registration, which is the index the controller knows.
 *
 * <p>Checks, in order: lost-GPU lines in nvidia-smi's output; GPUs missing or new; per GPU, a rise
 * in uncorrectable volatile ECC errors, pending or failed memory repairs, temperature. Immutable
 * and thread-safe.
 */
public final class HealthChecker {
  // "Unable to determine the device handle for GPU0000:3B:00.0: GPU is lost. Reboot ..."
  private static final String BUS = "[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\\.[0-9A-Fa-f]";
  private static final Pattern HANDLE =
      Pattern.compile(
          "Unable to determine the device handle for\\s+(?:GPU\\s*)?("
              + BUS
              + ")?[^:]*?:?\\s*(.*)");
  private static final Pattern BUS_ID = Pattern.compile("(" + BUS + ")");

  private final HealthPolicy policy;

  public HealthChecker(HealthPolicy policy) {
    this.policy = Objects.requireNonNull(policy, "policy");
  }

  /** Judges one discovery run against the baseline. */
  public HealthReport check(GpuInventory baseline, Discovery.Result current) {
    return switch (current) {
      case Discovery.Result.Found(var inventory) -> compare(baseline, inventory);
      case Discovery.Result.Failed(var message, var output) -> {
        List<HealthProblem> problems = new ArrayList<>();
        problems.add(new HealthProblem(HealthProblem.NODE, Kind.NVIDIA_SMI_FAILED, message));
        problems.addAll(lostGpus(baseline, output.lines().toList()));
        yield new HealthReport(problems);
      }
    };
  }

  /** Compares a fresh inventory with the baseline. */
  public HealthReport compare(GpuInventory baseline, GpuInventory current) {
    List<HealthProblem> problems = new ArrayList<>(lostGpus(baseline, current.warnings()));
    Set<Integer> lost = new HashSet<>();
    problems.forEach(p -> lost.add(p.gpuIndex()));

    // 1. Missing and new GPUs.
    for (GpuDetails was : baseline.gpus()) {
      if (current.byUuid(was.uuid()).isEmpty() && !lost.contains(was.index())) {
        problems.add(
            new HealthProblem(
                was.index(),
                Kind.GPU_MISSING,
                "GPU "
                    + was.index()
                    + " missing (was "
                    + GpuDetails.shortUuid(was.uuid())
                    + " at "
                    + was.pciBusId()
                    + "): fallen off the bus?"));
      }
    }
    for (GpuDetails now : current.gpus()) {
      if (baseline.byUuid(now.uuid()).isEmpty()) {
        problems.add(
            new HealthProblem(
                HealthProblem.NODE,
                Kind.GPU_APPEARED,
                now.label() + " appeared since registration; the node must register again"));
      }
    }

    // 2. Per GPU present in both.
    for (GpuDetails was : baseline.gpus()) {
      Optional<GpuDetails> found = current.byUuid(was.uuid());
      if (found.isEmpty()) {
        continue;
      }
      GpuDetails now = found.get();
      ecc(was, now).ifPresent(problems::add);
      repairs(was.index(), now).ifPresent(problems::add);
      thermal(was, now).ifPresent(problems::add);
    }
    return new HealthReport(problems);
  }

  private Optional<HealthProblem> ecc(GpuDetails was, GpuDetails now) {
    long before = was.eccUncorrectableVolatile();
    long after = now.eccUncorrectableVolatile();
    // Volatile counters reset when the driver reloads; a fall is not a problem.
    if (before < 0 || after < 0 || after - before <= policy.allowedEccRise()) {
      return Optional.empty();
    }
    return Optional.of(
        new HealthProblem(
            was.index(),
            Kind.ECC_ERRORS,
            was.label() + ": uncorrectable ECC errors rose " + before + " -> " + after));
  }

  private Optional<HealthProblem> repairs(int index, GpuDetails now) {
    List<String> found = new ArrayList<>();
    if (policy.pendingRepairsAreProblems() && now.retiredPagesPending()) {
      found.add("retired page pending");
    }
    if (policy.pendingRepairsAreProblems() && now.remappedRowsPending()) {
      found.add("row remapping pending");
    }
    if (now.remappedRowsFailure()) {
      found.add("row remapping failure");
    }
    if (found.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(
        new HealthProblem(
            index, Kind.PENDING_REPAIR, "GPU " + index + ": " + String.join(" / ", found)));
  }

  private Optional<HealthProblem> thermal(GpuDetails was, GpuDetails now) {
    int temperature = now.temperatureC();
    if (temperature < 0) {
      return Optional.empty();
    }
    int threshold =
        now.slowdownThresholdC() > 0 ? now.slowdownThresholdC() : was.slowdownThresholdC();
    String reason;
    if (threshold > 0) {
      if (temperature < threshold - policy.temperatureMarginC()) {
        return Optional.empty();
      }
      reason =
          "GPU "
              + was.index()
              + " at "
              + temperature
              + " C, slowdown threshold "
              + threshold
              + " C";
    } else {
      if (temperature < policy.fallbackMaxTemperatureC()) {
        return Optional.empty();
      }
      reason =
          "GPU "
              + was.index()
              + " at "
              + temperature
              + " C, limit "
              + policy.fallbackMaxTemperatureC()
              + " C (no slowdown threshold reported)";
    }
    return Optional.of(new HealthProblem(was.index(), Kind.THERMAL, reason));
  }

  /**
   * Lost GPUs named in nvidia-smi's output: "Unable to determine the device handle for GPU... :
   * ..." lines, and any line saying "GPU is lost" or "fallen off the bus". The bus id is matched to
   * the baseline to name the GPU; an unknown one is a node-wide problem.
   */
  static List<HealthProblem> lostGpus(GpuInventory baseline, List<String> lines) {
    List<HealthProblem> problems = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    for (String raw : lines) {
      String line = raw.strip();
      Matcher handle = HANDLE.matcher(line);
      String busId;
      String detail;
      if (handle.find()) {
        busId = handle.group(1) == null ? "" : handle.group(1);
        detail = handle.group(2).strip();
      } else if (line.contains("GPU is lost") || line.contains("fallen off the bus")) {
        Matcher bus = BUS_ID.matcher(line);
        busId = bus.find() ? bus.group(1) : "";
        detail = line;
      } else {
        continue;
      }
      String canonical = busId.isEmpty() ? "" : GpuDetails.canonicalBusId(busId);
      if (!seen.add(canonical + "|" + detail)) {
        continue;
      }
      Optional<GpuDetails> gpu =
          baseline.gpus().stream().filter(g -> g.pciBusId().equals(canonical)).findFirst();
      String suffix = detail.isEmpty() ? "" : ": " + detail;
      problems.add(
          gpu.map(
                  g ->
                      new HealthProblem(
                          g.index(), Kind.GPU_LOST, g.label() + " lost at " + canonical + suffix))
              .orElseGet(
                  () ->
                      new HealthProblem(
                          HealthProblem.NODE,
                          Kind.GPU_LOST,
                          (canonical.isEmpty() ? "a GPU" : "GPU at " + canonical)
                              + " lost"
                              + suffix)));
    }
    return problems;
  }
}

package io.kairos.agent.gpu;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.agent.gpu.HealthProblem.Kind;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/** The pure checker on sample inventories, changed the way a sick node changes. */
class HealthCheckerTest {
  private static final HealthChecker CHECKER = new HealthChecker(HealthPolicy.DEFAULTS);
  private final GpuInventory baseline = Samples.inventory("dgx-h100");

  @Test
  void anUnchangedNodeIsHealthy() {
    HealthReport report = CHECKER.compare(baseline, Samples.inventory("dgx-h100"));

    assertThat(report.isHealthy()).isTrue();
    assertThat(report.summary()).isEqualTo("healthy");
  }

  @Test
  void anyRiseInUncorrectableEccIsAProblem() {
    GpuInventory now = change(3, g -> with(g, 2, g.retiredPagesPending(), false, g.temperatureC()));

    HealthReport report = CHECKER.compare(baseline, now);

    assertThat(report.problems())
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.gpuIndex()).isEqualTo(3);
              assertThat(p.kind()).isEqualTo(Kind.ECC_ERRORS);
              assertThat(p.reason())
                  .isEqualTo("GPU 3 (GPU-e47b1d95...): uncorrectable ECC errors rose 0 -> 2");
            });
  }

  @Test
  void aRiseWithinThePolicyAndAFallAfterDriverReloadAreFine() {
    var lenient = new HealthChecker(new HealthPolicy(2, 0, 90, true));
    GpuInventory rose = change(3, g -> with(g, 2, false, false, g.temperatureC()));
    GpuInventory before = change(3, g -> with(g, 5, false, false, g.temperatureC()));

    assertThat(lenient.compare(baseline, rose).isHealthy()).isTrue();
    assertThat(CHECKER.compare(before, baseline).isHealthy()).isTrue();
  }

  @Test
  void pendingRetirementAndRemappingFailureAreProblems() {
    GpuInventory now = change(2, g -> with(g, 0, true, true, g.temperatureC()));

    HealthReport report = CHECKER.compare(baseline, now);

    assertThat(report.problems())
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.kind()).isEqualTo(Kind.PENDING_REPAIR);
              assertThat(p.reason())
                  .isEqualTo("GPU 2: retired page pending / row remapping failure");
            });
    var tolerant = new HealthChecker(new HealthPolicy(0, 0, 90, false));
    assertThat(tolerant.compare(baseline, now).problems())
        .extracting(HealthProblem::reason)
        .containsExactly("GPU 2: row remapping failure");
  }

  @Test
  void aGpuAtItsSlowdownThresholdIsTooHot() {
    GpuInventory now = change(1, g -> with(g, 0, false, false, 87));

    assertThat(CHECKER.compare(baseline, now).problems())
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.kind()).isEqualTo(Kind.THERMAL);
              assertThat(p.reason()).isEqualTo("GPU 1 at 87 C, slowdown threshold 87 C");
            });
    assertThat(CHECKER.compare(baseline, change(1, g -> with(g, 0, false, false, 86))).isHealthy())
        .isTrue();
  }

  @Test
  void withoutAThresholdTheFixedLimitApplies() {
    var csvBaseline =
        GpuInventory.of(
            "",
            QueryCsvParser.parse(Samples.read("dgx-h100", "query.csv")),
            Topology.EMPTY,
            List.of());
    List<GpuDetails> gpus = new ArrayList<>(csvBaseline.gpus());
    gpus.set(1, with(gpus.get(1), 0, false, false, 94));
    var now = GpuInventory.of("", gpus, Topology.EMPTY, List.of());

    assertThat(CHECKER.compare(csvBaseline, now).problems())
        .extracting(HealthProblem::reason)
        .containsExactly("GPU 1 at 94 C, limit 90 C (no slowdown threshold reported)");
  }

  @Test
  void aGpuGoneFromTheBusIsMissingByUuidEvenWhenTheOthersAreRenumbered() {
    List<GpuDetails> survivors = new ArrayList<>();
    for (GpuDetails g : baseline.gpus()) {
      if (g.index() != 5) {
        survivors.add(reindex(g, survivors.size()));
      }
    }
    GpuInventory now = GpuInventory.of("", survivors, Topology.EMPTY, List.of());

    HealthReport report = CHECKER.compare(baseline, now);

    assertThat(report.problems())
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.gpuIndex()).isEqualTo(5);
              assertThat(p.kind()).isEqualTo(Kind.GPU_MISSING);
              assertThat(p.reason())
                  .isEqualTo(
                      "GPU 5 missing (was GPU-38d5e9a0... at 0000:ab:00.0): fallen off the bus?");
            });
  }

  @Test
  void aNewGpuMeansTheNodeMustRegisterAgain() {
    GpuInventory smaller =
        GpuInventory.of("", baseline.gpus().subList(0, 7), Topology.EMPTY, List.of());

    assertThat(CHECKER.compare(smaller, baseline).problems())
        .extracting(HealthProblem::kind)
        .containsExactly(Kind.GPU_APPEARED);
  }

  @Test
  void lostGpuLinesNameTheGpuByItsBusId() {
    var failed =
        new Discovery.Result.Failed(
            "nvidia-smi -q -x exited 15: Unable to determine the device handle for GPU0000:AB:00.0: GPU is lost.",
            "Unable to determine the device handle for GPU0000:AB:00.0: GPU is lost. Reboot the system to recover this GPU\n");

    HealthReport report = CHECKER.check(baseline, failed);

    assertThat(report.problems())
        .extracting(HealthProblem::kind)
        .containsExactly(Kind.NVIDIA_SMI_FAILED, Kind.GPU_LOST);
    assertThat(report.problems().get(1).gpuIndex()).isEqualTo(5);
    assertThat(report.problems().get(1).reason())
        .isEqualTo(
            "GPU 5 (GPU-38d5e9a0...) lost at 0000:ab:00.0: GPU is lost. Reboot the system to recover this GPU");
  }

  @Test
  void aLostGpuOnStderrOfASuccessfulRunIsNotAlsoReportedMissing() {
    List<GpuDetails> others = baseline.gpus().stream().filter(g -> g.index() != 0).toList();
    GpuInventory now =
        GpuInventory.of(
            "",
            others,
            Topology.EMPTY,
            List.of("Unable to determine the device handle for GPU0000:18:00.0: Unknown Error"));

    assertThat(CHECKER.compare(baseline, now).problems())
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.kind()).isEqualTo(Kind.GPU_LOST);
              assertThat(p.gpuIndex()).isZero();
            });
  }

  @Test
  void aLostGpuAtAnUnknownBusIdIsANodeProblem() {
    var lost =
        HealthChecker.lostGpus(baseline, List.of("GPU 0000:01:00.0: GPU has fallen off the bus."));

    assertThat(lost)
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.gpuIndex()).isEqualTo(HealthProblem.NODE);
              assertThat(p.reason()).startsWith("GPU at 0000:01:00.0 lost");
            });
  }

  @Test
  void problemsListNodeWideFirstThenByGpu() {
    var report =
        new HealthReport(
            List.of(
                new HealthProblem(4, Kind.THERMAL, "GPU 4 hot"),
                new HealthProblem(-1, Kind.CHECK_PROGRAM, "check failed"),
                new HealthProblem(1, Kind.ECC_ERRORS, "GPU 1 ecc")));

    assertThat(report.summary()).isEqualTo("check failed; GPU 1 ecc; GPU 4 hot");
  }

  private GpuInventory change(int index, UnaryOperator<GpuDetails> change) {
    List<GpuDetails> gpus = new ArrayList<>(baseline.gpus());
    gpus.set(index, change.apply(gpus.get(index)));
    return GpuInventory.of(baseline.driverVersion(), gpus, baseline.topology(), List.of());
  }

  private static GpuDetails with(
      GpuDetails g, long ecc, boolean retired, boolean remapFailure, int temperature) {
    return new GpuDetails(
        g.index(),
        g.uuid(),
        g.model(),
        g.memoryBytes(),
        g.pciBusId(),
        temperature,
        g.slowdownThresholdC(),
        g.shutdownThresholdC(),
        ecc,
        g.eccUncorrectableAggregate(),
        retired,
        g.remappedRowsPending(),
        remapFailure);
  }

  private static GpuDetails reindex(GpuDetails g, int index) {
    return new GpuDetails(
        index,
        g.uuid(),
        g.model(),
        g.memoryBytes(),
        g.pciBusId(),
        g.temperatureC(),
        g.slowdownThresholdC(),
        g.shutdownThresholdC(),
        g.eccUncorrectableVolatile(),
        g.eccUncorrectableAggregate(),
        g.retiredPagesPending(),
        g.remappedRowsPending(),
        g.remappedRowsFailure());
  }
}

package io.kairos.sim.report;

import static io.kairos.sim.report.Runs.job;
import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.config.Tenancy;
import io.kairos.config.TenancyYaml;
import io.kairos.core.model.Cluster;
import io.kairos.core.sched.Policy;
import io.kairos.sim.SimOptions;
import io.kairos.sim.SimReport;
import io.kairos.sim.SimSeries;
import io.kairos.sim.SimTenancy;
import io.kairos.sim.Simulator;
import io.kairos.sim.trace.Trace;
import io.kairos.sim.trace.TraceJob;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;

/** Usage against quota: the series under a tenancy and its small-multiples chart. */
class QuotaChartTest {
  /** Queues q0..q{n-1} of {@code nominal} GPUs each in one cohort, reclaiming from borrowers. */
  private static Tenancy tenancy(int queues, int nominal) {
    var yaml = new StringBuilder("cohorts: [c]\nqueues:\n");
    for (int q = 0; q < queues; q++) {
      yaml.append("  - {name: q")
          .append(q)
          .append(", cohort: c, quotas: {gpu:gpu: {nominal: ")
          .append(nominal)
          .append("}}, preemption: {reclaimWithinCohort: ANY}}\n");
    }
    return TenancyYaml.parse(yaml.toString(), "test.yaml");
  }

  private static SimReport run(Policy policy, boolean schedule, Tenancy tenancy, Trace trace) {
    var options =
        SimOptions.defaults()
            .withSeries(true)
            .withTenancy(
                Optional.of(
                    SimTenancy.scheduling(tenancy).withSchedule(schedule).withAloneRuns(false)));
    return new Simulator(Cluster.uniform(4, 4, 16, 8), "4x4", policy, options).run(trace);
  }

  private static List<SimReport> runs() {
    Tenancy t = tenancy(3, 4);
    var trace = Runs.mixed("t.csv");
    return List.of(run(Policy.KAIROS, true, t, trace), run(Policy.EASY, false, t, trace));
  }

  private static Figure quotaFigure(List<Figure> figures, String policy) {
    return figures.stream().filter(f -> f.id().equals("quota-" + policy)).findFirst().orElseThrow();
  }

  @Test
  void oneChartPerPolicyWithOnePanelPerQueue() {
    var figures = ReportCharts.build(runs());

    assertThat(figures)
        .extracting(Figure::id)
        .containsExactly(
            "utilization",
            "wait-cdf",
            "queue-share",
            "quota-kairos",
            "quota-easy",
            "fragmentation");
    var doc = Xml.parse(quotaFigure(figures, "kairos").svg());
    var panels = Xml.find(doc, "g", "quota-panel");
    assertThat(panels)
        .extracting(p -> p.getAttribute("data-series"))
        .containsExactlyInAnyOrder("q0", "q1", "q2");
    for (Element panel : panels) {
      var area = panel.getElementsByTagNameNS("*", "path");
      var classes = new ArrayList<String>();
      for (int i = 0; i < area.getLength(); i++) {
        classes.add(((Element) area.item(i)).getAttribute("class"));
      }
      assertThat(classes).containsExactly("area within", "area above", "nominal", "frame");
    }
    assertThat(Xml.find(doc, "path", "nominal")).hasSize(3);
    assertThat(Xml.find(doc, "text", "panel-title"))
        .extracting(Element::getTextContent)
        .allSatisfy(t -> assertThat(t).endsWith("(nominal 4)"));
  }

  @Test
  void independentRunsOfTheSameInputGiveTheSameBytes() {
    var first = ReportCharts.build(runs());
    var second = ReportCharts.build(runs());

    for (String policy : List.of("kairos", "easy")) {
      assertThat(quotaFigure(first, policy).standaloneSvg())
          .isEqualTo(quotaFigure(second, policy).standaloneSvg());
      assertThat(quotaFigure(first, policy).table()).isEqualTo(quotaFigure(second, policy).table());
    }
  }

  @Test
  void withoutATenancyThereIsNoQuotaChart() {
    var cluster = Cluster.uniform(4, 4, 16, 8);
    var figures = ReportCharts.build(List.of(Runs.run(cluster, Policy.EASY, Runs.mixed("t"))));
    assertThat(figures).extracting(Figure::id).noneMatch(id -> id.startsWith("quota-"));
  }

  /**
   * One node of 4 GPUs, queues a (nominal 1) and b (nominal 3), FCFS measured only: a's 4-GPU job
   * runs 0..100 (1 within its quota, 3 above), then b's 2-GPU job runs 100..300.
   */
  @Test
  void theSeriesHoldsEachQueuesGpuSecondsAndNominal() {
    Tenancy t =
        TenancyYaml.parse(
            """
            queues:
              - {name: a, quotas: {gpu:gpu: {nominal: 1}}}
              - {name: b, quotas: {gpu:gpu: {nominal: 3}}}
              - {name: idle, quotas: {gpu:gpu: {nominal: 0}}}
            """,
            "test.yaml");
    var trace = Runs.trace("t", List.of(job(1, 0, 4, 100, "a"), job(2, 0, 2, 200, "b")));
    var options =
        SimOptions.defaults()
            .withSeries(true)
            .withTenancy(Optional.of(SimTenancy.scheduling(t).measuredOnly().withAloneRuns(false)));

    SimReport r =
        new Simulator(
                Cluster.uniform(1, 4, 16, 8), "1x4", Policy.byName("fcfs").orElseThrow(), options)
            .run(trace);

    SimSeries.QuotaUsage quota = r.series().orElseThrow().quota();
    // b ran 400 GPU-s, a 400: equal, so by name; idle has no jobs and no quota: not charted.
    assertThat(quota.queues()).containsExactly("a", "b");
    assertThat(quota.nominalGpus()).containsExactly(1, 3);
    assertThat(Arrays.stream(quota.gpuSec()[0]).sum()).isEqualTo(400);
    assertThat(Arrays.stream(quota.gpuSec()[1]).sum()).isEqualTo(400);
    var svg = Xml.parse(quotaFigure(ReportCharts.build(List.of(r)), "fcfs").svg());
    assertThat(Xml.find(svg, "g", "quota-panel"))
        .extracting(p -> p.getAttribute("data-series"))
        .containsExactly("a", "b");
  }

  @Test
  void queuesPastTheLimitAreSummedAgainstTheSumOfTheirQuotas() {
    int queues = SimSeries.MAX_QUOTA_QUEUES + 5;
    var jobs = new ArrayList<TraceJob>();
    for (int q = 0; q < queues; q++) {
      // Larger queues first: q0 runs the longest.
      jobs.add(job(q + 1, q, 1, 10_000 - q * 100L, "q" + q));
    }
    Tenancy t = tenancy(queues, 2);

    SimReport r = run(Policy.EASY, false, t, Runs.trace("t", jobs));

    SimSeries.QuotaUsage quota = r.series().orElseThrow().quota();
    assertThat(quota.queues()).hasSize(SimSeries.MAX_QUOTA_QUEUES + 1);
    assertThat(quota.queues().getFirst()).isEqualTo("q0");
    assertThat(quota.queues().getLast()).isEqualTo(SimSeries.OTHER_QUEUES);
    assertThat(quota.nominalGpus()[SimSeries.MAX_QUOTA_QUEUES]).isEqualTo(2L * 5);
    double other = Arrays.stream(quota.gpuSec()[SimSeries.MAX_QUOTA_QUEUES]).sum();
    double expected = 0;
    for (int q = SimSeries.MAX_QUOTA_QUEUES; q < queues; q++) {
      expected += 10_000 - q * 100L;
    }
    assertThat(other).isEqualTo(expected);
    var svg = Xml.parse(quotaFigure(ReportCharts.build(List.of(r)), "easy").svg());
    assertThat(Xml.find(svg, "g", "quota-panel")).hasSize(SimSeries.MAX_QUOTA_QUEUES + 1);
  }
}

package io.kairos.sim.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;

class StackedAreaChartTest {
  private static String chart() {
    double[] x = {0.5, 1.5, 2.5};
    var easy =
        new StackedAreaChart.Panel(
            "easy", x, List.of(new double[] {0.2, 0.3, 0.1}, new double[] {0.5, 0.4, 0}));
    var kairos =
        new StackedAreaChart.Panel(
            "kairos", x, List.of(new double[] {0.1, 0.1, 0.1}, new double[] {0.1, 0.2, 0.3}));
    return StackedAreaChart.svg(
        "share",
        "GPU share per queue",
        "Stacked.",
        Axis.linear("time (hours)", 0, 3, ReportCharts::number),
        Axis.linear("share", 0, 1, v -> Math.round(v * 100) + "%"),
        List.of("research", "prod"),
        List.of(easy, kairos));
  }

  @Test
  void onePanelPerPolicyWithOneAreaPerQueue() {
    var doc = Xml.parse(chart());
    assertThat(Xml.find(doc, "g", "panel"))
        .extracting(p -> p.getAttribute("data-panel"))
        .containsExactly("easy", "kairos");
    assertThat(Xml.find(doc, "text", "panel-title"))
        .extracting(Element::getTextContent)
        .containsExactly("easy", "kairos");
    var areas = Xml.find(doc, "path", "area");
    assertThat(areas)
        .extracting(a -> a.getAttribute("data-panel") + "/" + a.getAttribute("data-series"))
        .containsExactly("easy/research", "easy/prod", "kairos/research", "kairos/prod");
    assertThat(areas).allSatisfy(a -> assertThat(a.getAttribute("d")).endsWith("Z"));
    assertThat(Xml.find(doc, "g", "legend-entry"))
        .extracting(Element::getTextContent)
        .containsExactly("research", "prod");
  }

  @Test
  void layersStackOnTheOnesBelow() {
    var areas = Xml.find(Xml.parse(chart()), "path", "area");
    List<String> first = points(areas.get(0).getAttribute("d"));
    List<String> second = points(areas.get(1).getAttribute("d"));
    // Each band runs along its top (3 points), then back along its bottom (3 points).
    assertThat(second.subList(3, 6)).containsExactlyElementsOf(first.subList(0, 3).reversed());
  }

  private static List<String> points(String d) {
    return List.of(d.replace("Z", "").substring(1).split("L"));
  }

  @Test
  void sameInputGivesTheSameBytes() {
    assertThat(chart()).isEqualTo(chart());
  }
}

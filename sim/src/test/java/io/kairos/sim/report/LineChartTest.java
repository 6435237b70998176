package io.kairos.sim.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;

class LineChartTest {
  private static final Axis TIME = Axis.linear("time (hours)", 0, 10, ReportCharts::number);
  private static final Axis SHARE = Axis.linear("busy (%)", 0, 1, v -> Math.round(v * 100) + "%");

  private static String chart(List<Series> series) {
    return LineChart.svg(
        "c1", "Utilization & <more>", "One line per policy.", TIME, SHARE, series, false);
  }

  private static Series line(String name, int points) {
    double[] x = new double[points];
    double[] y = new double[points];
    for (int i = 0; i < points; i++) {
      x[i] = 10.0 * i / Math.max(1, points - 1);
      y[i] = (i % 7) / 7.0;
    }
    return new Series(name, x, y);
  }

  @Test
  void isAnAccessibleImageWithTitleAndDescription() {
    var doc = Xml.parse(chart(List.of(line("easy", 5))));
    Element svg = doc.getDocumentElement();
    assertThat(svg.getTagName()).isEqualTo("svg");
    assertThat(svg.getNamespaceURI()).isEqualTo(Svg.NS);
    assertThat(svg.getAttribute("role")).isEqualTo("img");
    assertThat(svg.getAttribute("aria-labelledby")).isEqualTo("c1-title c1-desc");
    Element title = (Element) svg.getElementsByTagNameNS("*", "title").item(0);
    assertThat(title.getAttribute("id")).isEqualTo("c1-title");
    assertThat(title.getTextContent()).isEqualTo("Utilization & <more>");
    assertThat(Xml.find(doc, "desc", null))
        .singleElement()
        .satisfies(d -> assertThat(d.getTextContent()).isEqualTo("One line per policy."));
  }

  @Test
  void drawsOnePathPerSeriesWithATooltipAndATextLegend() {
    var doc = Xml.parse(chart(List.of(line("easy", 5), line("kairos", 5), line("fcfs", 5))));
    var paths = Xml.find(doc, "path", "series");
    assertThat(paths)
        .extracting(p -> p.getAttribute("data-series"))
        .containsExactly("easy", "kairos", "fcfs");
    assertThat(paths)
        .extracting(p -> p.getElementsByTagNameNS("*", "title").item(0).getTextContent())
        .containsExactly("easy", "kairos", "fcfs");
    assertThat(paths.get(0).getAttribute("stroke-dasharray")).isEmpty();
    assertThat(paths.get(1).getAttribute("stroke-dasharray")).isNotEmpty();
    assertThat(Xml.find(doc, "g", "legend-entry"))
        .extracting(Element::getTextContent)
        .containsExactly("easy", "kairos", "fcfs");
  }

  @Test
  void labelsBothAxes() {
    var doc = Xml.parse(chart(List.of(line("easy", 5))));
    assertThat(Xml.find(doc, "text", "axis-label"))
        .extracting(Element::getTextContent)
        .containsExactly("time (hours)", "busy (%)");
    assertThat(Xml.find(doc, "g", "x-axis").getFirst().getTextContent()).contains("0", "10");
    assertThat(Xml.find(doc, "g", "y-axis").getFirst().getTextContent()).contains("0%", "100%");
  }

  @Test
  void escapesSeriesNamesEverywhere() {
    String name = "q<\"'&>";
    String svg = chart(List.of(line(name, 3)));
    assertThat(svg).doesNotContain("q<\"");
    var doc = Xml.parse(svg);
    assertThat(Xml.find(doc, "path", "series").getFirst().getAttribute("data-series"))
        .isEqualTo(name);
  }

  @Test
  void sameInputGivesTheSameBytes() {
    var series = List.of(line("easy", 500), line("kairos", 500));
    assertThat(chart(series)).isEqualTo(chart(List.of(line("easy", 500), line("kairos", 500))));
  }

  @Test
  void pathHasOnePointPerDataPoint() {
    var doc = Xml.parse(chart(List.of(line("easy", 2000))));
    String d = Xml.find(doc, "path", "series").getFirst().getAttribute("d");
    assertThat(d.chars().filter(c -> c == 'M' || c == 'L').count()).isEqualTo(2000);
  }

  @Test
  void stepwiseChartsDrawAStepFunctionFromZero() {
    var cdf = new Series("easy", new double[] {1, 100}, new double[] {0.5, 1});
    String svg =
        LineChart.svg(
            "cdf",
            "CDF",
            "d",
            Axis.log("wait (s)", 1, 100, ReportCharts::powerOfTen),
            SHARE,
            List.of(cdf),
            true);
    String d = Xml.find(Xml.parse(svg), "path", "series").getFirst().getAttribute("d");
    assertThat(d).startsWith("M72,").matches("M[^MHV]+(H[^HV]+V[^HV]+){2}H[0-9.]+");
  }

  @Test
  void rejectsPointsGoingBackwards() {
    assertThatThrownBy(() -> new Series("x", new double[] {2, 1}, new double[] {0, 0}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("goes back");
  }
}

package io.kairos.sim.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kairos.core.model.Cluster;
import io.kairos.core.sched.Policy;
import io.kairos.sim.SimOptions;
import io.kairos.sim.SimReport;
import io.kairos.sim.Simulator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class HtmlReportTest {
  private static List<SimReport> runs(String source) {
    var trace = Runs.mixed(source);
    var cluster = Cluster.uniform(4, 4, 16, 8);
    return List.of(Runs.run(cluster, Policy.EASY, trace), Runs.run(cluster, Policy.KAIROS, trace));
  }

  private static String page(String source) {
    var runs = runs(source);
    var parameters = new LinkedHashMap<String, String>();
    parameters.put("trace", source);
    parameters.put("seed", "1");
    return HtmlReport.page(runs, parameters, ReportCharts.build(runs));
  }

  @Test
  void sameRunsGiveTheSameBytes() {
    assertThat(page("t.csv")).isEqualTo(page("t.csv"));
  }

  @Test
  void holdsFourChartsEachWithTitleDescriptionAndDataTable() {
    String html = page("t.csv");
    assertThat(count(html, "<svg ")).isEqualTo(4);
    assertThat(count(html, "role=\"img\"")).isEqualTo(4);
    assertThat(count(html, "<details>")).isEqualTo(4);
    for (String title :
        List.of(
            "GPU utilization over time", "Wait-time distribution (CDF)",
            "GPU share per queue over time", "GPU fragmentation over time")) {
      assertThat(html).contains("\">" + title + "</h2>");
    }
    assertThat(html).contains("<th scope=\"row\">easy</th>", "<th scope=\"row\">kairos</th>");
  }

  @Test
  void isSelfContained() {
    String html = page("t.csv");
    assertThat(html).doesNotContain("<script", "<link", "<img", "@import", "url(");
    var urls =
        Pattern.compile("https?://[^\"\\s<]+")
            .matcher(html)
            .results()
            .map(m -> m.group())
            .distinct()
            .toList();
    assertThat(urls).containsExactly(Svg.NS);
    assertThat(html).contains("Content-Security-Policy", "default-src 'none'");
  }

  @Test
  void idsAreUnique() {
    String html = page("t.csv");
    var ids =
        Pattern.compile(" id=\"([^\"]+)\"").matcher(html).results().map(m -> m.group(1)).toList();
    assertThat(ids)
        .doesNotHaveDuplicates()
        .contains("chart-utilization-title", "chart-wait-cdf-desc");
  }

  @Test
  void escapesTheTraceName() {
    String html = page("<script>alert(1)</script>.csv");
    assertThat(html)
        .doesNotContain("<script>")
        .contains("&lt;script&gt;alert(1)&lt;/script&gt;.csv");
  }

  @Test
  void tablesAreBounded() {
    String html = page("t.csv");
    // Each time-series table has at most TABLE_ROWS rows per policy (queue tables: per policy).
    int rows = count(html, "<tr>");
    assertThat(rows).isLessThan(4 * 2 * (ReportCharts.TABLE_ROWS + 2) + 20);
  }

  @Test
  void standaloneChartsAreWellFormedXml() {
    for (Figure f : ReportCharts.build(runs("t.csv"))) {
      var doc = Xml.parse(f.standaloneSvg());
      assertThat(doc.getDocumentElement().getAttribute("role")).isEqualTo("img");
      assertThat(f.fileName()).endsWith(".svg");
    }
  }

  @Test
  void chartsNeedSeries() {
    var run =
        new Simulator(Cluster.uniform(1, 4, 16, 8), "1x4", Policy.EASY, SimOptions.defaults())
            .run(Runs.mixed("t"));
    assertThatThrownBy(() -> ReportCharts.build(List.of(run)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("no series");
  }

  private static int count(String text, String part) {
    int n = 0;
    for (int i = text.indexOf(part); i >= 0; i = text.indexOf(part, i + 1)) {
      n++;
    }
    return n;
  }
}

package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Level;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;

/**
 * {@code kairos simulate --report} end to end: simulates the SDSC SP2 trace (59,715 jobs, six
 * queues) with two policies on 32 nodes of 4 GPUs, then opens the HTML report in a real headless
 * chromium and checks what a reader sees: the four chart titles, one line per policy in each chart,
 * one panel per policy with an area per queue, the summary table with both policies' numbers, the
 * data tables behind {@code <details>}, and no console errors (the page's Content-Security-Policy
 * would log one for any outside load). Leaves a screenshot in {@code
 * target/simulation-report/report.png}.
 *
 * <p>Needs Debian's {@code chromium} and {@code chromium-driver}; skipped where they are absent.
 */
class SimulationReportIT {
  private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
  private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
  private static final Path OUT = Path.of("target", "simulation-report");
  private static final List<String> POLICIES = List.of("easy", "kairos");

  private static ChromeDriver driver;
  private static Path report;

  @BeforeAll
  static void simulateAndOpen() throws Exception {
    assumeTrue(
        Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER),
        "needs /usr/bin/chromium and /usr/bin/chromedriver (Debian chromium, chromium-driver)");
    Files.createDirectories(OUT);
    report = OUT.resolve("report.html");
    var result =
        SimulateCommandTest.kairos(
            "simulate",
            "--trace",
            trace("swf/SDSC-SP2-1998-4.2-cln.swf.gz").toString(),
            "--cluster",
            "32x4",
            "--policy",
            String.join(",", POLICIES),
            "--no-timing",
            "--report",
            report.toString(),
            "--charts",
            OUT.resolve("charts").toString());
    result.assertOk();

    var service =
        new ChromeDriverService.Builder()
            .usingDriverExecutable(CHROMEDRIVER.toFile())
            .usingAnyFreePort()
            .build();
    var options = new ChromeOptions();
    options.setBinary(CHROMIUM.toFile());
    options.addArguments(
        "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1024,900");
    var logs = new LoggingPreferences();
    logs.enable(LogType.BROWSER, Level.ALL);
    options.setCapability("goog:loggingPrefs", logs);
    driver = new ChromeDriver(service, options);
    driver.get(report.toAbsolutePath().toUri().toString());
  }

  @AfterAll
  static void close() {
    if (driver != null) {
      driver.quit();
    }
  }

  /** The shared trace directory: -Dkairos.traces (set by the build), else next to the repo. */
  private static Path trace(String relative) {
    var tried = new ArrayList<Path>();
    var property = System.getProperty("kairos.traces");
    if (property != null && !property.isBlank()) {
      tried.add(Path.of(property));
    }
    tried.add(Path.of("../../shared/traces"));
    tried.add(Path.of("../shared/traces"));
    for (Path dir : tried) {
      if (Files.isRegularFile(dir.resolve(relative))) {
        return dir.resolve(relative).toAbsolutePath().normalize();
      }
    }
    throw new IllegalStateException(relative + " not found under " + tried);
  }

  @Test
  void showsTheFourChartTitles() {
    assertThat(driver.getTitle()).startsWith("Kairos simulation report");
    for (String title :
        List.of(
            "GPU utilization over time",
            "Wait-time distribution (CDF)",
            "GPU share per queue over time",
            "GPU fragmentation over time")) {
      WebElement heading = driver.findElement(By.xpath("//h2[normalize-space()='" + title + "']"));
      assertThat(heading.isDisplayed()).as(title).isTrue();
    }
  }

  @Test
  void eachLineChartHasOneVisibleLinePerPolicy() {
    for (String chart : List.of("chart-utilization", "chart-wait-cdf", "chart-fragmentation")) {
      WebElement svg = driver.findElement(By.id(chart));
      assertThat(svg.isDisplayed()).as(chart).isTrue();
      assertThat(svg.getRect().getWidth()).as(chart + " width").isGreaterThan(300);
      assertThat(svg.getAttribute("role")).isEqualTo("img");
      var lines = svg.findElements(By.cssSelector("path.series"));
      assertThat(lines)
          .extracting(l -> l.getAttribute("data-series"))
          .as(chart)
          .containsExactlyElementsOf(POLICIES);
      for (WebElement line : lines) {
        assertThat(line.getAttribute("d").length()).as(chart + " path").isGreaterThan(100);
      }
      assertThat(svg.findElements(By.cssSelector("g.legend-entry")))
          .extracting(WebElement::getText)
          .containsExactlyElementsOf(POLICIES);
    }
  }

  @Test
  void queueChartHasAPanelPerPolicyAndAnAreaPerQueue() {
    WebElement svg = driver.findElement(By.id("chart-queue-share"));
    var panels = svg.findElements(By.cssSelector("g.panel"));
    assertThat(panels)
        .extracting(p -> p.getAttribute("data-panel"))
        .containsExactlyElementsOf(POLICIES);
    var legend =
        svg.findElements(By.cssSelector("g.legend-entry")).stream()
            .map(WebElement::getText)
            .toList();
    // SDSC SP2's queues (SWF field 15: 1 to 6) that hold simulated jobs, largest first.
    assertThat(legend).hasSizeBetween(2, 6).allMatch(q -> q.matches("q[1-6]"));
    for (WebElement panel : panels) {
      assertThat(panel.findElements(By.cssSelector("path.area")))
          .extracting(a -> a.getAttribute("data-series"))
          .containsExactlyElementsOf(legend);
    }
  }

  @Test
  void summaryTableListsBothPoliciesWithNumbers() {
    var rows = driver.findElements(By.cssSelector("#summary-h ~ table tbody tr"));
    assertThat(rows).hasSize(POLICIES.size());
    for (int i = 0; i < rows.size(); i++) {
      var row = rows.get(i);
      assertThat(row.findElement(By.tagName("th")).getText()).isEqualTo(POLICIES.get(i));
      var cells = row.findElements(By.tagName("td")).stream().map(WebElement::getText).toList();
      assertThat(cells).hasSize(7).allMatch(c -> c.matches("[0-9][0-9,]*(\\.[0-9]+)?%?"));
      assertThat(cells.getFirst()).as("jobs").isNotEqualTo("0");
    }
    assertThat(driver.findElement(By.tagName("dl")).getText()).contains("SDSC-SP2", "32x4", "seed");
  }

  @Test
  void dataTablesOpenFromTheirSummaries() {
    WebElement details = driver.findElement(By.cssSelector("#utilization details"));
    WebElement table = details.findElement(By.tagName("table"));
    assertThat(table.isDisplayed()).isFalse();
    details.findElement(By.tagName("summary")).click();
    assertThat(table.isDisplayed()).isTrue();
    assertThat(table.findElements(By.cssSelector("thead th")))
        .extracting(WebElement::getText)
        .contains("easy", "kairos");
    assertThat(table.findElements(By.cssSelector("tbody tr"))).hasSizeBetween(10, 100);
    details.findElement(By.tagName("summary")).click();
  }

  @Test
  void logsNoConsoleErrorsAndLeavesAScreenshot() throws Exception {
    List<LogEntry> errors =
        driver.manage().logs().get(LogType.BROWSER).getAll().stream()
            .filter(e -> e.getLevel().intValue() >= Level.WARNING.intValue())
            .toList();
    assertThat(errors).as("browser console").isEmpty();
    long height =
        ((Number)
                ((JavascriptExecutor) driver)
                    .executeScript("return document.documentElement.scrollHeight"))
            .longValue();
    driver.manage().window().setSize(new Dimension(1024, (int) Math.min(height + 40, 8000)));
    ((JavascriptExecutor) driver).executeScript("window.scrollTo(0, 0)");
    byte[] png = driver.getScreenshotAs(OutputType.BYTES);
    Path shot = OUT.resolve("report.png");
    Files.write(shot, png);
    assertThat(png.length).isGreaterThan(10_000);
    assertThat(new File(shot.toString())).exists();
  }

  @Test
  void writesTheChartsAsStandaloneSvgFiles() throws Exception {
    for (String name :
        List.of("utilization.svg", "wait-cdf.svg", "queue-share.svg", "fragmentation.svg")) {
      String svg = Files.readString(OUT.resolve("charts").resolve(name));
      assertThat(svg).as(name).startsWith("<?xml").contains("role=\"img\"", "<title", "<desc");
    }
  }
}

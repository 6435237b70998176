package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kairos.protocol.JobState;
import io.kairos.protocol.JobView;
import io.kairos.protocol.SubmitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;

/**
 * The dashboard's tenancy views in a real headless chromium, against a real controller started with
 * a tenancy file ({@code kairos server --tenancy}) and a real agent emulating 4 H100s, as
 * processes. Queues a and b share cohort lab, 2 GPUs of nominal quota each; b may reclaim. A job of
 * a borrows a third GPU; the queues page shows {@code 3 / 2 gpu:H100, +1 borrowed}, the accounts as
 * a tree, and a job's page its account and class. Then b takes its quota back: the borrower's page
 * shows the preemption (by which job) and why it now waits (QUOTA, with the numbers). Screenshots
 * go to {@code target/screenshots/}.
 */
class DashboardTenancyIT {
  static final Path CHROMIUM = Path.of("/usr/bin/chromium");
  static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
  static final Path SHOTS = Path.of("target", "screenshots");

  static final String TENANCY =
      """
      # A short protection, so the test does not wait out the default 30 s.
      scheduling: {protection: {minRuntime: 3s}}
      priorityClasses:
        - {name: high, value: 1000, preemptible: false}
        - {name: low, value: 10, preemptible: true}
      cohorts: [lab]
      queues:
        - name: a
          cohort: lab
          quotas:
            gpu:H100: {nominal: 2, borrowingLimit: 2}
          defaults: {account: vision, priorityClass: low}
        - name: b
          cohort: lab
          quotas:
            gpu:H100: {nominal: 2}
          preemption: {reclaimWithinCohort: ANY}
          defaults: {account: nlp}
        - name: solo
          quotas:
            gpu:H100: {nominal: 0}
      accounts:
        - {name: research, shares: 3}
        - {name: vision, parent: research, shares: 2}
        - {name: nlp, parent: research, shares: 1}
        - {name: ops, shares: 1}
      """;

  @TempDir Path dir;
  WebDriver driver;

  long submit(TestCluster cluster, String json) throws Exception {
    return TestCluster.JSON.readValue(cluster.post("/api/v1/jobs", json), SubmitResult.class).id();
  }

  void until(String what, BooleanSupplier condition) throws InterruptedException {
    TestCluster.waitFor(
        what,
        Duration.ofSeconds(20),
        () -> {
          try {
            return condition.getAsBoolean();
          } catch (RuntimeException e) { // an element replaced by a refresh while we read it
            return false;
          }
        },
        () -> driver.findElement(By.id("main")).getText());
  }

  String text(String css) {
    return driver.findElement(By.cssSelector(css)).getText();
  }

  boolean shows(String css, String expected) {
    var found = driver.findElements(By.cssSelector(css));
    return !found.isEmpty() && found.getFirst().getText().contains(expected);
  }

  void open(String hash) throws InterruptedException {
    driver.navigate().to(driver.getCurrentUrl().replaceAll("#.*$", "") + hash);
    until("the page for " + hash, () -> !driver.findElements(By.cssSelector(".view")).isEmpty());
  }

  void shot(String name) throws Exception {
    Files.createDirectories(SHOTS);
    Files.write(
        SHOTS.resolve(name + ".png"), ((ChromeDriver) driver).getScreenshotAs(OutputType.BYTES));
  }

  /** The share of the bar's width a part of it takes, 0 to 1. */
  double widthOf(WebElement row, String part) {
    double whole = row.findElement(By.cssSelector(".bar")).getSize().getWidth();
    return row.findElement(By.cssSelector(".bar ." + part)).getSize().getWidth() / whole;
  }

  /** How far an account's name is indented, in CSS pixels. */
  static double indent(WebElement accountRow) {
    return Double.parseDouble(
        accountRow.findElement(By.cssSelector("th")).getCssValue("padding-left").replace("px", ""));
  }

  @Test
  void theQueuesPageShowsQuotasByCohortAndTheAccountsAndAJobItsTenancy() throws Exception {
    assumeTrue(
        Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER),
        "needs /usr/bin/chromium and /usr/bin/chromedriver (Debian chromium, chromium-driver)");
    Path file = dir.resolve("tenancy.yaml");
    Files.writeString(file, TENANCY);
    var service =
        new ChromeDriverService.Builder()
            .usingDriverExecutable(CHROMEDRIVER.toFile())
            .usingAnyFreePort()
            .build();
    try (var cluster = TestCluster.start(dir, "--tenancy", file.toString())) {
      cluster.agent("n1", 1, "4xH100");

      // 1. A borrower in a (3 GPUs: nominal 2, +1 from b) and a high-class job of b (1 GPU).
      long borrower =
          submit(
              cluster,
              "{\"name\": \"borrower\", \"command\": [\"sleep\", \"600\"],"
                  + " \"gpus\": 3, \"queue\": \"a\"}");
      long high =
          submit(
              cluster,
              "{\"name\": \"urgent\", \"command\": [\"sleep\", \"600\"],"
                  + " \"gpus\": 1, \"queue\": \"b\", \"priorityClass\": \"high\"}");
      cluster.waitState(borrower, JobState.RUNNING, Duration.ofSeconds(30));
      cluster.waitState(high, JobState.RUNNING, Duration.ofSeconds(30));

      var options = new ChromeOptions();
      options.setBinary(CHROMIUM.toFile());
      options.addArguments(
          "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1366,900");
      var prefs = new LoggingPreferences();
      prefs.enable(LogType.BROWSER, Level.ALL);
      options.setCapability("goog:loggingPrefs", prefs);
      driver = new ChromeDriver(service, options);

      // 2. Sign in.
      driver.get(cluster.url + "/");
      until("the login form", () -> driver.findElement(By.id("token")).isDisplayed());
      driver.findElement(By.id("token")).sendKeys(cluster.adminToken);
      driver.findElement(By.cssSelector("#login-form button[type=submit]")).click();
      until(
          "the overview",
          () -> !driver.findElements(By.cssSelector(".view[data-view='overview']")).isEmpty());

      // 3. Queues: grouped by cohort; a borrows, b does not; solo is in no cohort.
      open("#/queues");
      String rowA = "#queues-table tbody[data-cohort='lab'] tr[data-queue='a']";
      String rowB = "#queues-table tbody[data-cohort='lab'] tr[data-queue='b']";
      until(
          "queue a's quota",
          () -> shows(rowA + " li[data-resource='gpu:H100']", "3 / 2 gpu:H100, +1 borrowed"));
      assertThat(text(rowB + " li[data-resource='gpu:H100']"))
          .startsWith("1 / 2 gpu:H100")
          .doesNotContain("borrowed");
      assertThat(text(rowA + " td[data-col='running']")).isEqualTo("1");
      assertThat(text(rowA + " td[data-col='pending']")).isEqualTo("0");
      assertThat(text(rowA + " td[data-col='gpusRunning']")).isEqualTo("3");
      assertThat(text(rowB + " td[data-col='running']")).isEqualTo("1");
      assertThat(text(rowA + " li")).as("a's limit is said").contains("may borrow up to 2 more");
      assertThat(text("#queues-table tbody[data-cohort='lab'] .cohort-head"))
          .contains("Cohort lab")
          .contains("4 / 4 gpu:H100 in use");
      assertThat(
              driver.findElements(
                  By.cssSelector("#queues-table tbody:not([data-cohort]) tr[data-queue='solo']")))
          .as("solo, in no cohort, in the last group")
          .hasSize(1);
      // The bar: a's scale is nominal 2 + borrowing limit 2 = 4; 2 own, 1 borrowed. b borrows none.
      var a = driver.findElement(By.cssSelector(rowA));
      assertThat(widthOf(a, "own")).isCloseTo(0.5, org.assertj.core.data.Offset.offset(0.05));
      assertThat(widthOf(a, "borrowed")).isCloseTo(0.25, org.assertj.core.data.Offset.offset(0.05));
      assertThat(widthOf(driver.findElement(By.cssSelector(rowB)), "borrowed")).isZero();
      assertThat(a.findElement(By.cssSelector(".bar .borrowed")).getCssValue("background-color"))
          .isNotEqualTo(a.findElement(By.cssSelector(".bar .own")).getCssValue("background-color"));

      // 4. Accounts: the tree in pre-order, children indented under their parent, with usage.
      until(
          "the accounts",
          () -> driver.findElements(By.cssSelector("#accounts-table tbody tr")).size() == 4);
      var accounts = driver.findElements(By.cssSelector("#accounts-table tbody tr"));
      assertThat(accounts)
          .extracting(r -> r.getDomAttribute("data-account"))
          .containsExactly("ops", "research", "nlp", "vision");
      var research =
          driver.findElement(By.cssSelector("#accounts-table tr[data-account='research']"));
      var vision = driver.findElement(By.cssSelector("#accounts-table tr[data-account='vision']"));
      assertThat(indent(vision))
          .as("vision is indented under research")
          .isGreaterThan(indent(research));
      assertThat(indent(research))
          .isEqualTo(
              indent(driver.findElement(By.cssSelector("#accounts-table tr[data-account='ops']"))));
      assertThat(vision.findElement(By.cssSelector("td[data-col='shares']")).getText())
          .isEqualTo("2");
      // research: 3 of 4 top-level shares; vision: 2 of 3 of that = 50%.
      assertThat(research.findElement(By.cssSelector("td[data-col='normalizedShare']")).getText())
          .isEqualTo("75.0%");
      assertThat(vision.findElement(By.cssSelector("td[data-col='normalizedShare']")).getText())
          .isEqualTo("50.0%");
      assertThat(vision.findElement(By.cssSelector("td[data-col='gpuHours']")).getText())
          .matches("\\d+\\.\\d\\d");
      assertThat(vision.findElement(By.cssSelector("td[data-col='factor']")).getText())
          .matches("[01]\\.\\d{3}");
      shot("tenancy-queues");

      // 5. A job's page: its account and class.
      open("#/jobs/" + high);
      until("the job's account", () -> shows("#job-facts dd[data-fact='account']", "nlp"));
      assertThat(text("#job-facts dd[data-fact='priority-class']")).isEqualTo("high");
      assertThat(text("#job-facts dd[data-fact='priority']")).isEqualTo("1000");
      assertThat(driver.findElement(By.id("job-notice")).isDisplayed()).isFalse();

      // 6. b takes its quota back: the borrower is preempted (after its 3 s of protection) and
      //    waits for quota, as its page says, with the preemptor in its timeline.
      long claimer =
          submit(
              cluster,
              "{\"name\": \"claimer\", \"command\": [\"sleep\", \"600\"],"
                  + " \"gpus\": 1, \"queue\": \"b\"}");
      TestCluster.waitFor(
          "the borrower is preempted and waits for quota",
          Duration.ofSeconds(90),
          () -> {
            JobView v = cluster.job(borrower);
            return v.state() == JobState.PENDING
                && v.preemptedAt() != null
                && "QUOTA".equals(v.pendingReason());
          },
          () -> "borrower: " + cluster.job(borrower) + "\nclaimer: " + cluster.job(claimer));
      JobView waiting = cluster.job(borrower);
      open("#/jobs/" + borrower);
      until(
          "the preemption in the timeline",
          () -> shows("#job-timeline li[data-event='preempted']", "Preempted by job " + claimer));
      String detail =
          waiting
              .pendingDetail()
              .replaceAll("(; reserved from \\S+)?(; predicted start \\S+)?$", "");
      until(
          "the quota notice", () -> shows("#job-notice", "QUOTA") && shows("#job-notice", detail));
      assertThat(
              driver
                  .findElement(By.cssSelector("#job-timeline li[data-event='preempted'] a"))
                  .getDomAttribute("href"))
          .isEqualTo("#/jobs/" + claimer);
      assertThat(text("#job-facts dd[data-fact='account']")).isEqualTo("vision");
      assertThat(text("#job-facts dd[data-fact='priority-class']")).isEqualTo("low");
      assertThat(text("#job-facts dd[data-fact='preempted']"))
          .isEqualTo("1 time, last by job " + claimer);
      List<String> events =
          driver.findElements(By.cssSelector("#job-timeline li")).stream()
              .map(e -> e.getDomAttribute("data-event"))
              .toList();
      assertThat(events).as("in time order").containsSubsequence("submitted", "preempted");
      shot("tenancy-job-preempted");

      // 7. The queues page follows: a borrows nothing and waits; b uses its own 2.
      open("#/queues");
      until(
          "queue a after the reclaim",
          () -> shows(rowA + " li[data-resource='gpu:H100']", "0 / 2 gpu:H100"));
      assertThat(text(rowA + " td[data-col='pending']")).isEqualTo("1");
      assertThat(text(rowB + " li[data-resource='gpu:H100']")).startsWith("2 / 2 gpu:H100");

      // 8. Nothing went wrong in the page.
      assertThat(driver.manage().logs().get(LogType.BROWSER).getAll())
          .filteredOn(e -> e.getLevel().intValue() >= Level.SEVERE.intValue())
          .isEmpty();
    } finally {
      if (driver != null) {
        driver.quit();
      }
      service.stop();
    }
  }
}

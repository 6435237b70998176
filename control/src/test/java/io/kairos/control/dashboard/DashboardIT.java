package io.kairos.control.dashboard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.core.type.TypeReference;
import com.sun.net.httpserver.HttpServer;
import io.kairos.control.Controller;
import io.kairos.control.ControllerConfig;
import io.kairos.control.Leaders;
import io.kairos.control.TestApi;
import io.kairos.protocol.GpuDevice;
import io.kairos.protocol.JobState;
import io.kairos.protocol.JobView;
import io.kairos.protocol.NodeView;
import io.kairos.protocol.QueueView;
import io.kairos.protocol.SubmitResult;
import io.kairos.protocol.agent.ExitReason;
import io.kairos.protocol.agent.Heartbeat;
import io.kairos.protocol.agent.HeartbeatReply;
import io.kairos.protocol.agent.Registered;
import io.kairos.protocol.agent.Registration;
import io.kairos.protocol.agent.TaskReport;
import io.kairos.protocol.agent.TaskStatus;
import java.io.File;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Level;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The dashboard in a real headless chromium against a real in-process controller, with fake agents
 * that register over the agent API and drive their tasks through heartbeats (the agent module is
 * not a dependency of control). The cluster holds jobs in every state and a drained node; the test
 * asserts on what a person sees, and saves a screenshot of each page under {@code
 * target/screenshots/}.
 */
class DashboardIT {
  static final File CHROMIUM = new File("/usr/bin/chromium");
  static final File CHROMEDRIVER = new File("/usr/bin/chromedriver");
  static final Path SHOTS = Path.of("target", "screenshots");

  @TempDir static Path dir;
  static Controller controller;
  static TestApi api;
  static HttpServer logServer;
  static FakeAgents agents;
  static ChromeDriverService service;
  static WebDriver driver;
  static WebDriverWait wait;
  static long running4;
  static long running2;
  static long succeeded;
  static long failed;
  static long cancelled;
  static long pending;

  /** Fake agents: tasks run until the test ends them; heartbeats every 300 ms keep nodes alive. */
  static final class FakeAgents {
    final TestApi agent;
    final Map<String, Long> epochs = new ConcurrentHashMap<>();

    /** Per node, the tasks it holds: key jobId/attempt/task. */
    final Map<String, Map<String, TaskReport>> tasks = new ConcurrentHashMap<>();

    /** Exit codes the test asked for, by job id. */
    final Map<Long, Integer> exits = new ConcurrentHashMap<>();

    final Thread loop;

    FakeAgents(TestApi agent) {
      this.agent = agent;
      loop = Thread.ofVirtual().name("fake-agents").start(this::run);
    }

    void register(Registration r) {
      var reply = agent.post("/api/v1/agents/register", r);
      assertThat(reply.status()).as(reply.body()).isEqualTo(200);
      tasks.put(r.node(), new ConcurrentHashMap<>());
      epochs.put(r.node(), reply.as(Registered.class).epoch());
    }

    void finish(long jobId, int exitCode) {
      exits.put(jobId, exitCode);
    }

    private void run() {
      while (!Thread.currentThread().isInterrupted()) {
        for (var node : epochs.keySet()) {
          try {
            beat(node);
          } catch (RuntimeException | AssertionError e) {
            // the controller is stopping, or a reply was not what we expected: try again
          }
        }
        try {
          Thread.sleep(300);
        } catch (InterruptedException e) {
          return;
        }
      }
    }

    private void beat(String node) {
      var held = tasks.get(node);
      long now = System.currentTimeMillis();
      for (var e : held.entrySet()) {
        TaskReport t = e.getValue();
        Integer code = exits.get(t.jobId());
        if (code != null && t.status() == TaskStatus.RUNNING) {
          e.setValue(
              new TaskReport(
                  t.jobId(),
                  t.attempt(),
                  t.task(),
                  TaskStatus.EXITED,
                  code,
                  null,
                  null,
                  t.startedAtMs(),
                  now));
        }
      }
      var reply =
          agent
              .asNode(node)
              .post(
                  "/api/v1/agents/heartbeat",
                  new Heartbeat(node, epochs.get(node), List.copyOf(held.values()), 0))
              .as(HeartbeatReply.class);
      for (var a : reply.launch()) {
        held.putIfAbsent(
            a.jobId() + "/" + a.attempt() + "/" + a.task(),
            new TaskReport(
                a.jobId(),
                a.attempt(),
                a.task(),
                a.barrier() ? TaskStatus.READY : TaskStatus.RUNNING,
                null,
                null,
                null,
                now,
                null));
      }
      for (var go : reply.go()) {
        held.computeIfPresent(
            go.jobId() + "/" + go.attempt() + "/" + go.task(),
            (k, t) ->
                new TaskReport(
                    t.jobId(),
                    t.attempt(),
                    t.task(),
                    TaskStatus.RUNNING,
                    null,
                    null,
                    null,
                    now,
                    null));
      }
      for (var kill : reply.kill()) {
        held.replaceAll(
            (k, t) ->
                t.jobId() == kill.jobId()
                        && t.attempt() == kill.attempt()
                        && t.status() != TaskStatus.EXITED
                    ? new TaskReport(
                        t.jobId(),
                        t.attempt(),
                        t.task(),
                        TaskStatus.EXITED,
                        143,
                        ExitReason.KILLED,
                        null,
                        t.startedAtMs(),
                        now)
                    : t);
      }
      for (var f : reply.forget()) {
        held.remove(f.jobId() + "/" + f.attempt() + "/" + f.task());
      }
    }

    void close() {
      loop.interrupt();
    }
  }

  static Registration node(
      String name, int gpus, String zone, String rack, int nvlink, String address) {
    var list = new ArrayList<GpuDevice>();
    for (int i = 0; i < gpus; i++) {
      list.add(new GpuDevice(i, "GPU-" + name + "-" + i, "H100", 80L << 30));
    }
    return TestApi.identified(
        new Registration(name, address, list, 64, 512L << 30, Map.of(), zone, "b1", rack, nvlink));
  }

  static long submit(String json) {
    var r = api.post("/api/v1/jobs", json);
    assertThat(r.status()).as(r.body()).isEqualTo(201);
    return r.as(SubmitResult.class).id();
  }

  static JobView job(long id) {
    return api.get("/api/v1/jobs/" + id).as(JobView.class);
  }

  static void awaitState(long id, JobState state) {
    await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(100))
        .until(() -> job(id).state() == state);
  }

  @BeforeAll
  static void start() throws Exception {
    assumeTrue(
        CHROMIUM.canExecute() && CHROMEDRIVER.canExecute(),
        "needs Debian's chromium and chromium-driver (/usr/bin/chromium, /usr/bin/chromedriver)");
    controller =
        Controller.start(
            ControllerConfig.single(dir, "127.0.0.1", 0).withRunAs(TestApi.SINGLE_USER));
    Leaders.awaitLeader(controller, Duration.ofSeconds(30));
    api = new TestApi(controller.url(), controller.adminToken());

    // The agents' log server: every task printed two lines.
    logServer = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    logServer.createContext(
        "/logs/",
        ex -> {
          String[] parts = ex.getRequestURI().getPath().split("/"); // "", logs, job, attempt, task
          String query = ex.getRequestURI().getQuery() == null ? "" : ex.getRequestURI().getQuery();
          long offset =
              query.contains("offset=")
                  ? Long.parseLong(query.replaceAll(".*offset=(\\d+).*", "$1"))
                  : 0;
          byte[] all =
              ("hello from job " + parts[2] + " task " + parts[4] + "\nstep 1/1 done\n")
                  .getBytes(StandardCharsets.UTF_8);
          byte[] rest =
              java.util.Arrays.copyOfRange(all, (int) Math.min(offset, all.length), all.length);
          ex.getResponseHeaders().add("Kairos-Log-Offset", Long.toString(all.length));
          ex.getResponseHeaders().add("Kairos-Log-Done", "true");
          ex.sendResponseHeaders(200, rest.length == 0 ? -1 : rest.length);
          ex.getResponseBody().write(rest);
          ex.close();
        });
    logServer.start();
    String logs = "http://127.0.0.1:" + logServer.getAddress().getPort();

    agents = new FakeAgents(api.as(controller.joinToken()));
    agents.register(node("n1", 8, "z1", "r1", 4, logs));
    agents.register(node("n2", 8, "z1", "r2", 8, logs));
    agents.register(node("n3", 4, "z2", "r3", 4, logs));
    assertThat(
            api.post("/api/v1/nodes/n3/drain", "{\"reason\": \"maintenance: PSU swap\"}").status())
        .isEqualTo(200);

    succeeded = submit("{\"name\": \"quick\", \"command\": [\"echo\", \"hi\"], \"gpus\": 1}");
    failed = submit("{\"name\": \"broken\", \"command\": [\"false\"], \"gpus\": 1}");
    cancelled = submit("{\"name\": \"mistake\", \"command\": [\"sleep\", \"1\"], \"gpus\": 1}");
    awaitState(succeeded, JobState.RUNNING);
    awaitState(failed, JobState.RUNNING);
    awaitState(cancelled, JobState.RUNNING);
    agents.finish(succeeded, 0);
    agents.finish(failed, 3);
    assertThat(api.post("/api/v1/jobs/" + cancelled + "/cancel", "").status()).isEqualTo(200);
    awaitState(succeeded, JobState.SUCCEEDED);
    awaitState(failed, JobState.FAILED);
    awaitState(cancelled, JobState.CANCELLED);
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                api.get("/api/v1/nodes").as(new TypeReference<List<NodeView>>() {}).stream()
                    .allMatch(n -> n.gpusUsed() == 0));

    running4 =
        submit("{\"name\": \"train-a\", \"command\": [\"python\", \"train.py\"], \"gpus\": 4}");
    running2 =
        submit(
            "{\"name\": \"eval-b\", \"command\": [\"python\", \"eval.py\"], \"gpus\": 2, \"queue\": \"research\"}");
    awaitState(running4, JobState.RUNNING);
    awaitState(running2, JobState.RUNNING);
    pending =
        submit(
            "{\"name\": \"big-gang\", \"command\": [\"torchrun\", \"x.py\"], \"gpus\": 16, \"gpusPerNode\": 8}");
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () -> {
              var p = job(pending);
              return p.state() == JobState.PENDING
                  && p.pendingReason() != null
                  && !p.pendingReason().equals("NOT_YET_CONSIDERED");
            });

    var options = new ChromeOptions();
    options.setBinary(CHROMIUM);
    options.addArguments(
        "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1366,768");
    var prefs = new LoggingPreferences();
    prefs.enable(LogType.BROWSER, Level.ALL);
    options.setCapability("goog:loggingPrefs", prefs);
    service =
        new ChromeDriverService.Builder()
            .usingDriverExecutable(CHROMEDRIVER)
            .usingAnyFreePort()
            .build();
    driver = new ChromeDriver(service, options);
    wait = new WebDriverWait(driver, Duration.ofSeconds(20));
    Files.createDirectories(SHOTS);
  }

  @AfterAll
  static void stop() throws Exception {
    if (driver != null) {
      driver.quit();
    }
    if (service != null) {
      service.stop();
    }
    if (agents != null) {
      agents.close();
    }
    if (logServer != null) {
      logServer.stop(0);
    }
    if (controller != null) {
      controller.close();
    }
  }

  static void shot(String name) throws Exception {
    byte[] png = ((TakesScreenshot) driver).getScreenshotAs(OutputType.BYTES);
    Files.write(SHOTS.resolve(name + ".png"), png);
  }

  static String text(String css) {
    return driver.findElement(By.cssSelector(css)).getText();
  }

  static void awaitText(String css, String expected) {
    new WebDriverWait(driver, Duration.ofSeconds(20))
        .withMessage(
            () ->
                css
                    + " should read "
                    + expected
                    + ", reads "
                    + driver.findElements(By.cssSelector(css)).stream()
                        .map(WebElement::getText)
                        .toList())
        .until(
            d -> {
              var found = d.findElements(By.cssSelector(css));
              return !found.isEmpty() && found.getFirst().getText().trim().equals(expected);
            });
  }

  static void go(String route) {
    driver.findElement(By.cssSelector("nav a[data-route='" + route + "']")).click();
    wait.until(d -> !d.findElements(By.cssSelector(".view[data-view='" + route + "']")).isEmpty());
  }

  static List<LogEntry> severe() {
    return driver.manage().logs().get(LogType.BROWSER).getAll().stream()
        .filter(e -> e.getLevel().intValue() >= Level.SEVERE.intValue())
        .toList();
  }

  @Test
  void aPersonSeesTheClusterTheJobsAndLiveChanges() throws Exception {
    // 1. Login: a bad token shows an error; the admin token opens the overview.
    driver.get(controller.url() + "/");
    wait.until(d -> d.findElement(By.id("token")).isDisplayed());
    shot("login");
    driver.findElement(By.id("token")).sendKeys("kusr-not-a-real-token");
    driver.findElement(By.cssSelector("#login-form button[type=submit]")).click();
    wait.until(d -> d.findElement(By.id("login-error")).getText().contains("not valid"));
    assertThat(severe())
        .as("only the refused token's 401")
        .allSatisfy(e -> assertThat(e.getMessage()).contains("401"));
    var token = driver.findElement(By.id("token"));
    token.clear();
    token.sendKeys(controller.adminToken());
    driver.findElement(By.cssSelector("#login-form button[type=submit]")).click();

    // 2. Overview: the counts are the API's.
    var nodes = api.get("/api/v1/nodes").as(new TypeReference<List<NodeView>>() {});
    int busy =
        nodes.stream()
            .filter(n -> n.state() != io.kairos.protocol.NodeState.DOWN)
            .mapToInt(NodeView::gpusUsed)
            .sum();
    int drained =
        nodes.stream()
            .filter(n -> n.state() == io.kairos.protocol.NodeState.DRAINED)
            .mapToInt(n -> n.gpus() - n.gpusUsed())
            .sum();
    int free =
        nodes.stream()
            .filter(n -> n.state() == io.kairos.protocol.NodeState.UP)
            .mapToInt(n -> n.gpus() - n.gpusUsed())
            .sum();
    var queues = api.get("/api/v1/queues").as(new TypeReference<List<QueueView>>() {});
    assertThat(busy).isEqualTo(6);
    awaitText("[data-stat='gpus-busy'] dd", Integer.toString(busy));
    awaitText("[data-stat='gpus-free'] dd", Integer.toString(free));
    awaitText("[data-stat='gpus-drained'] dd", Integer.toString(drained));
    awaitText("[data-stat='gpus-down'] dd", "0");
    awaitText(
        "[data-stat='pending'] dd",
        Integer.toString(queues.stream().mapToInt(QueueView::pending).sum()));
    awaitText(
        "[data-stat='running'] dd",
        Integer.toString(queues.stream().mapToInt(QueueView::running).sum()));
    assertThat(driver.findElement(By.id("live-status")).getText()).isEqualTo("Live");
    wait.until(d -> !d.findElements(By.cssSelector("#utilization-chart")).isEmpty());
    assertThat(driver.findElement(By.id("chart-summary")).getText()).isNotBlank();
    shot("overview");

    // 3. Cluster map: one cell per GPU; the busy ones colored, titled with their job.
    go("cluster");
    wait.until(d -> d.findElements(By.cssSelector("#cluster-map .gpu")).size() == 20);
    var busyCells = driver.findElements(By.cssSelector("#cluster-map .gpu.busy"));
    assertThat(busyCells).hasSize(6);
    for (WebElement cell : busyCells) {
      assertThat(cell.getCssValue("background-color"))
          .isNotEqualTo(
              driver
                  .findElement(By.cssSelector("#cluster-map li[data-node='n2'] .gpu:not(.busy)"))
                  .getCssValue("background-color"));
    }
    var trainCell =
        driver.findElement(By.cssSelector("#cluster-map .gpu[data-job='" + running4 + "']"));
    assertThat(trainCell.getDomAttribute("title")).contains("job " + running4).contains("train-a");
    var n3 = driver.findElement(By.cssSelector("#cluster-map li[data-node='n3']"));
    assertThat(n3.getDomAttribute("class")).contains("DRAINED");
    assertThat(n3.findElement(By.cssSelector(".gpu")).getDomAttribute("title"))
        .contains("maintenance: PSU swap");
    shot("cluster");

    // 4. Jobs: every state shows; the filter narrows; a pending job says why.
    go("jobs");
    wait.until(d -> d.findElements(By.cssSelector("#jobs-table tbody tr")).size() == 6);
    shot("jobs");
    new Select(driver.findElement(By.id("filter-state"))).selectByValue("FAILED");
    new WebDriverWait(driver, Duration.ofSeconds(20))
        .withMessage(
            () ->
                "one FAILED row, not "
                    + driver.findElements(By.cssSelector("#jobs-table tbody tr")).stream()
                        .map(WebElement::getText)
                        .toList()
                    + " "
                    + driver.manage().logs().get(LogType.BROWSER).getAll())
        .until(
            d -> {
              var rows = d.findElements(By.cssSelector("#jobs-table tbody tr"));
              return rows.size() == 1
                  && String.valueOf(failed).equals(rows.getFirst().getDomAttribute("data-job-id"));
            });
    new Select(driver.findElement(By.id("filter-state"))).selectByValue("PENDING");
    String reason = job(pending).pendingReason();
    wait.until(
        d -> {
          var rows = d.findElements(By.cssSelector("#jobs-table tbody tr"));
          return rows.size() == 1
              && rows.getFirst().findElement(By.cssSelector("td.why")).getText().contains(reason);
        });
    shot("jobs-pending");
    new Select(driver.findElement(By.id("filter-state"))).selectByValue("");
    wait.until(d -> d.findElements(By.cssSelector("#jobs-table tbody tr")).size() == 6);

    // 5. A new submit appears without a reload (the event stream).
    ((JavascriptExecutor) driver).executeScript("window.kairosMarker = 'same page';");
    long late = submit("{\"name\": \"late-arrival\", \"command\": [\"true\"], \"gpus\": 1}");
    wait.until(
        d ->
            !d.findElements(By.cssSelector("#jobs-table tbody tr[data-job-id='" + late + "']"))
                .isEmpty());
    assertThat(((JavascriptExecutor) driver).executeScript("return window.kairosMarker;"))
        .isEqualTo("same page");

    // 6. A job page: timeline, placement and output.
    driver.findElement(By.cssSelector("#jobs-table a[href='#/jobs/" + succeeded + "']")).click();
    wait.until(
        d -> d.findElement(By.id("job-logs")).getText().contains("hello from job " + succeeded));
    assertThat(text("#job-timeline"))
        .contains("Submitted")
        .contains("Started")
        .contains("Ended SUCCEEDED");
    assertThat(text("#job-facts")).contains("Exit code").contains("0");
    assertThat(text("#job-placement")).contains("n");
    shot("job");

    // 7. Queues.
    go("queues");
    wait.until(
        d -> !d.findElements(By.cssSelector("#queues-table tr[data-queue='research']")).isEmpty());
    assertThat(text("#queues-table tr[data-queue='default']")).startsWith("default");
    // Without tenancy the page is the plain load table: no quota column, cohorts or accounts.
    assertThat(driver.findElements(By.cssSelector("#queues-table thead th")))
        .extracting(WebElement::getText)
        .containsExactly("Queue", "Pending jobs", "Running jobs", "GPUs running", "GPUs pending");
    assertThat(
            driver.findElements(
                By.cssSelector("#queues-table td.quotas, #queues-table .cohort-head")))
        .isEmpty();
    assertThat(driver.findElement(By.id("accounts")).isDisplayed()).isFalse();
    shot("queues");

    // 8. Nothing went wrong in the page.
    assertThat(severe()).as("browser console errors").isEmpty();
  }

  /**
   * Another user's job: its details show, its private data (command, output) reads "(private)", and
   * the page asks for no log it may not read (no error in the console).
   */
  @Test
  void anotherUsersJobShowsItsPrivateDataAsPrivate() throws Exception {
    var created = api.post("/api/v1/tokens", Map.of("user", "alice"));
    assertThat(created.status()).as(created.body()).isEqualTo(201);
    String alice = created.as(io.kairos.protocol.TokenCreated.class).token();
    driver.get(controller.url() + "/");
    ((JavascriptExecutor) driver).executeScript("sessionStorage.clear();");
    driver.navigate().refresh();
    wait.until(d -> d.findElement(By.id("token")).isDisplayed());
    driver.findElement(By.id("token")).sendKeys(alice);
    driver.findElement(By.cssSelector("#login-form button[type=submit]")).click();
    wait.until(d -> d.findElement(By.id("logout")).isDisplayed());
    severe(); // drop what came before

    driver.get(controller.url() + "/#/jobs/" + succeeded);
    wait.until(d -> d.findElement(By.id("job-facts")).getText().contains("Command"));
    assertThat(text("#job-facts dd[data-fact='command']")).isEqualTo("(private)");
    assertThat(text("#job-facts")).contains("admin").contains("SUCCEEDED");
    wait.until(d -> d.findElement(By.id("log-state")).getText().contains("private"));
    assertThat(text("#job-logs")).isEmpty();
    shot("job-private");
    assertThat(severe()).as("browser console errors").isEmpty();

    ((JavascriptExecutor) driver).executeScript("sessionStorage.clear();");
    driver.navigate().refresh();
  }
}

package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.control.Controller;
import io.kairos.control.ControllerConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code kairos config show|apply|history} against a real controller: what an admin types to change
 * the queues of a running cluster, and what a user's token gets.
 */
class ConfigCommandTest extends ClientTestSupport {
  static final String V1 =
      """
      queues:
        - name: research
          quotas: {"gpu:H100": {nominal: 8}}
      """;
  static final String V2 =
      """
      queues:
        - name: research
          quotas: {"gpu:H100": {nominal: 16}}
        - name: prod
          quotas: {"gpu:H100": {nominal: 8}}
      """;

  Controller controller;

  @BeforeEach
  void startController() throws Exception {
    controller = Controller.start(ControllerConfig.single(dir.resolve("ctl"), "127.0.0.1", 0));
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!controller.replica().isLeaderReady()
        || controller.replica().stateMachine().read(s -> s.tokens().size()) < 2) {
      assertThat(System.nanoTime()).as("the controller leads within 30 s").isLessThan(deadline);
      Thread.sleep(20);
    }
    env.put("KAIROS_SERVER", controller.url());
    env.put("KAIROS_TOKEN", controller.adminToken());
  }

  @AfterEach
  void stopController() throws Exception {
    controller.close();
  }

  Path file(String name, String text) throws Exception {
    Path p = dir.resolve(name);
    Files.writeString(p, text);
    return p;
  }

  @Test
  void anAdminAppliesShowsAndListsVersions() throws Exception {
    var none = kairos("config", "show");
    assertThat(none.code()).isZero();
    assertThat(none.err()).contains("no configuration");

    var first = kairos("config", "apply", file("v1.yaml", V1).toString()).assertOk();
    assertThat(first.out()).contains("+  - name: research").contains("applied: version 1");

    var dry = kairos("config", "apply", "--dry-run", file("v2.yaml", V2).toString()).assertOk();
    assertThat(dry.out())
        .contains("--- config v1")
        .contains("+    quotas: {\"gpu:H100\": {nominal: 16}}")
        .contains("+  - name: prod")
        .contains("queues added: prod")
        .contains("dry run: not applied (version 1");

    kairos("config", "apply", "--expect-version", "1", dir.resolve("v2.yaml").toString())
        .assertOk();
    var shown = kairos("config", "show");
    assertThat(shown.out()).isEqualTo(V2);
    assertThat(shown.err()).contains("version 2").contains("by admin");
    assertThat(kairos("config", "show", "--version", "1").out()).isEqualTo(V1);

    var again = kairos("config", "apply", dir.resolve("v2.yaml").toString()).assertOk();
    assertThat(again.out()).contains("unchanged: version 2");

    String history = kairos("config", "history").assertOk().out();
    assertThat(history.lines().skip(1).map(l -> l.split("\\s+")[0]).toList())
        .containsExactly("2", "1");
    assertThat(kairos("queues").assertOk().out()).contains("prod").contains("research");
  }

  @Test
  void badInputGetsOneLineOrTheFileProblemsAndChangesNothing() throws Exception {
    kairos("config", "apply", file("v1.yaml", V1).toString()).assertOk();

    var invalid =
        kairos(
            "config",
            "apply",
            file("bad.yaml", "queues:\n  - name: x\n    quotass: {}\n").toString());
    assertThat(invalid.code()).isEqualTo(2);
    assertThat(invalid.err()).contains("bad.yaml").contains("quotass").doesNotContain("\tat ");

    kairos("config", "apply", dir.resolve("missing.yaml").toString())
        .assertError(2, "missing.yaml");
    kairos("config", "apply", "--expect-version", "0", dir.resolve("v1.yaml").toString());
    kairos("config", "apply", "--expect-version", "0", file("v2.yaml", V2).toString())
        .assertError(1, "version 1");
    kairos("config", "show", "--version", "7").assertError(1, "no configuration version 7");
    assertThat(kairos("config", "show").out()).isEqualTo(V1);
  }

  @Test
  void aUserTokenNeitherReadsNorChangesIt() throws Exception {
    var created = kairos("token", "create", "--user", "bob");
    assertThat(created.code()).as(created.err()).isZero();
    String bob = created.out().strip();
    env.put("KAIROS_TOKEN", bob);
    kairos("config", "show").assertError(1, "admin");
    kairos("config", "history").assertError(1, "admin");
    kairos("config", "apply", file("v1.yaml", V1).toString()).assertError(1, "admin");
  }
}

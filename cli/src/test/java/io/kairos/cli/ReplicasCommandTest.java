package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.control.Controller;
import io.kairos.control.ControllerConfig;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code kairos replicas} against a real single-replica controller: the listing, the refusals (the
 * last member, a bad address, a replica that does not run, a user's token). Adding and removing
 * members of a three-replica group is tested end to end in the control module's FailoverIT.
 */
class ReplicasCommandTest extends ClientTestSupport {
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

  @Test
  void listsTheGroupAndRefusesWhatWouldBreakIt() {
    String listed = kairos("replicas", "list").assertOk().out();
    assertThat(listed).contains("REPLICA").contains(controller.url()).contains("leader");
    String self = controller.url().substring("http://".length());
    kairos("replicas", "remove", self).assertError(1, "last member");
    kairos("replicas", "remove", "10.9.9.9:8080").assertError(1, "no member");
    kairos("replicas", "add", "not an address").assertError(2, "address");
    kairos("replicas", "add", self).assertError(1, "member already");
    assertThat(kairos("replicas").assertOk().out()).isEqualTo(listed.replaceAll("\\d+ ms", "0 ms"));
  }

  @Test
  void aUserTokenCannotListOrChangeTheGroup() {
    var created = kairos("token", "create", "--user", "bob");
    env.put("KAIROS_TOKEN", created.out().strip());
    kairos("replicas", "list").assertError(1, "admin");
    kairos("replicas", "add", "127.0.0.1:1").assertError(1, "admin");
    kairos("replicas", "remove", "127.0.0.1:1").assertError(1, "admin");
  }
}

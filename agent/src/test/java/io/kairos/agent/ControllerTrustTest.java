package io.kairos.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kairos.agent.ControllerClient.Outcome;
import io.kairos.protocol.agent.Registered;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Where the agent refuses to send its join token, and the form of a CA pin. */
class ControllerTrustTest {
  static final Path DATA = Path.of("/tmp/kairos-agent-test");

  static AgentConfig.Builder agent(String... urls) {
    return AgentConfig.builder(List.of(urls), "kjoin_secret", "n1", DATA);
  }

  @Test
  void plainHttpIsRefusedOffLoopbackUnlessInsecure() {
    assertThatThrownBy(() -> ControllerTrust.of(agent("http://10.0.0.1:8080").build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("http://10.0.0.1:8080 is plain HTTP over the network")
        .hasMessageContaining("--ca-hash")
        .hasMessageContaining("--insecure");
    assertThatThrownBy(() -> ControllerTrust.of(agent("http://ctl.example:8080").build()))
        .hasMessageContaining("plain HTTP over the network");
    var insecure = ControllerTrust.of(agent("http://10.0.0.1:8080").insecure(true).build());
    assertThat(insecure.refusal("http://10.0.0.1:8080")).isEmpty();
    var local = ControllerTrust.of(agent("http://127.0.0.1:8080", "http://localhost:8081").build());
    assertThat(local.refusal("http://127.0.0.2:8080")).isEmpty();
    assertThat(local.refusal("http://[::1]:8080")).isEmpty();
    assertThat(local.refusal("https://10.0.0.1:8080")).isEmpty();
    assertThat(local.refusal("http://10.0.0.1:8080")).isPresent();
    assertThat(local.context()).isEmpty();
  }

  @Test
  void loopbackIsDecidedWithoutALookup() {
    assertThat(ControllerTrust.isLoopback("localhost")).isTrue();
    assertThat(ControllerTrust.isLoopback("127.0.0.5")).isTrue();
    assertThat(ControllerTrust.isLoopback("::1")).isTrue();
    assertThat(ControllerTrust.isLoopback("10.0.0.1")).isFalse();
    assertThat(ControllerTrust.isLoopback("0.0.0.0")).isFalse();
    assertThat(ControllerTrust.isLoopback("my-loopback-alias")).isFalse();
  }

  @Test
  void aPinIsSha256AndHex() {
    String hex = "AB".repeat(32);
    assertThat(ControllerTrust.parseHash(" sha256:" + hex + " "))
        .isEqualTo("sha256:" + hex.toLowerCase(java.util.Locale.ROOT));
    assertThatThrownBy(() -> ControllerTrust.parseHash("sha1:" + hex))
        .hasMessageContaining("must be sha256: and 64 hex digits");
    assertThatThrownBy(() -> ControllerTrust.parseHash("sha256:abc"))
        .hasMessageContaining("64 hex digits");
  }

  @Test
  void aRefusedUrlGetsNoRequestAndTheClientMovesOn() throws Exception {
    // No CA, not insecure: a plain URL off loopback (where a 421 could point) is refused before
    // any connection is tried (10.0.0.9 is not dialled: the outcome is not Unreachable).
    var trust = ControllerTrust.of(agent("http://127.0.0.1:7000").build());
    try (var client =
        new ControllerClient(
            List.of("http://10.0.0.9:8080", "http://127.0.0.1:7000"), "tok", trust)) {
      Outcome<Registered> o =
          client.post("/register", Map.of(), Registered.class, 0).get(10, TimeUnit.SECONDS);
      assertThat(o).isInstanceOf(Outcome.Failed.class);
      assertThat(((Outcome.Failed<Registered>) o).body()).contains("plain HTTP over the network");
      assertThat(client.current()).isEqualTo("http://127.0.0.1:7000");
    }
  }
}

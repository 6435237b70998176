package io.kairos.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.nio.file.Path;
import java.util.List;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class AgentConfigTest {
  private static final Path DATA = Path.of("/tmp/kairos-test");

  private static AgentConfig.Builder valid() {
    return AgentConfig.builder(List.of("http://127.0.0.1:7000"), "join-secret", "n1", DATA);
  }

  @Test
  void defaultsAreFilledIn() {
    AgentConfig config = valid().build();

    assertThat(config.gpus()).isEqualTo(EmulatedGpus.NONE);
    assertThat(config.cpus()).isEqualTo(Runtime.getRuntime().availableProcessors());
    assertThat(config.memoryBytes()).isPositive();
    assertThat(config.listenHost()).isEqualTo("127.0.0.1");
    assertThat(config.listenPort()).isZero();
    assertThat(List.of(config.zone(), config.block(), config.rack()))
        .containsExactly("zone-0", "block-0", "rack-0");
    assertThat(config.heartbeatWaitMs()).isEqualTo(1_000);
    assertThat(config.killGraceMs()).isEqualTo(10_000);
    assertThat(config.maxTaskOutputBytes()).isZero();
  }

  @Test
  void controllerUrlsLoseTheirTrailingSlash() {
    var config =
        AgentConfig.builder(
                AgentConfig.parseControllers("http://a:7000/, https://b:7001"), "t", "n1", DATA)
            .build();

    assertThat(config.controllers()).containsExactly("http://a:7000", "https://b:7001");
  }

  @Test
  void nvlinkDomainDefaultsToAllGpus() {
    assertThat(valid().gpus("8").build().effectiveNvlinkDomainSize()).isEqualTo(8);
    assertThat(valid().gpus("8").nvlinkDomainSize(4).build().effectiveNvlinkDomainSize())
        .isEqualTo(4);
  }

  @Test
  void toStringHidesTheJoinToken() {
    assertThat(valid().build().toString()).doesNotContain("join-secret").contains("n1");
  }

  record Bad(String name, String field, UnaryOperator<AgentConfig.Builder> change) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Bad> badInputs() {
    return Stream.of(
        new Bad("zero cpus", "cpus", b -> b.cpus(0)),
        new Bad("negative memory", "memoryBytes", b -> b.memoryBytes(-1)),
        new Bad("port too large", "listenPort", b -> b.listen("127.0.0.1", 70_000)),
        new Bad("blank host", "listenHost", b -> b.listen(" ", 0)),
        new Bad("zone with a slash", "zone", b -> b.topology("z/1", "b", "r")),
        new Bad("empty rack", "rack", b -> b.topology("z", "b", "")),
        new Bad("negative wait", "heartbeatWaitMs", b -> b.heartbeatWaitMs(-5)),
        new Bad("wait of a day", "heartbeatWaitMs", b -> b.heartbeatWaitMs(86_400_000)),
        new Bad("negative grace", "killGraceMs", b -> b.killGraceMs(-1)),
        new Bad("negative output limit", "maxTaskOutputBytes", b -> b.maxTaskOutputBytes(-1)),
        new Bad(
            "nvlink domain larger than the node",
            "nvlinkDomainSize",
            b -> b.gpus("4").nvlinkDomainSize(8)),
        new Bad(
            "nvlink domain that does not divide the GPUs",
            "nvlinkDomainSize",
            b -> b.gpus("8").nvlinkDomainSize(3)),
        new Bad("bad gpu spec", "gpus", b -> b.gpus("lots")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badInputs")
  void badInputIsRejectedNamingTheField(Bad bad) {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> bad.change().apply(valid()).build())
        .withMessageStartingWith(bad.field());
  }

  record BadRequired(
      String name, String field, List<String> controllers, String token, String node) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<BadRequired> badRequired() {
    var ok = List.of("http://127.0.0.1:7000");
    return Stream.of(
        new BadRequired("no controllers", "controllers", List.of(), "t", "n1"),
        new BadRequired("ftp controller", "controllers[0]", List.of("ftp://x:1"), "t", "n1"),
        new BadRequired("no scheme", "controllers[1]", List.of("http://a:1", "b:7000"), "t", "n1"),
        new BadRequired("blank url", "controllers[0]", List.of(" "), "t", "n1"),
        new BadRequired("url with a query", "controllers[0]", List.of("http://a:1?x=1"), "t", "n1"),
        new BadRequired("blank token", "joinToken", ok, " ", "n1"),
        new BadRequired("node with a space", "nodeName", ok, "t", "node 1"),
        new BadRequired("node with a slash", "nodeName", ok, "t", "../n1"),
        new BadRequired("no node", "nodeName", ok, "t", null));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badRequired")
  void badRequiredFieldIsRejectedNamingIt(BadRequired bad) {
    assertThatIllegalArgumentException()
        .isThrownBy(
            () -> AgentConfig.builder(bad.controllers(), bad.token(), bad.node(), DATA).build())
        .withMessageStartingWith(bad.field());
  }

  @Test
  void parseControllersKeepsEmptyEntriesSoValidationNamesThem() {
    assertThatIllegalArgumentException()
        .isThrownBy(
            () ->
                AgentConfig.builder(
                        AgentConfig.parseControllers("http://a:1,,http://b:2"), "t", "n1", DATA)
                    .build())
        .withMessageStartingWith("controllers[1]");
  }
}

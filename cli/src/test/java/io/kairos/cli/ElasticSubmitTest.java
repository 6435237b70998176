package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@code kairos submit} of elastic jobs: a GPU range on the command line and in a job file. */
class ElasticSubmitTest extends ClientTestSupport {
  private static final ObjectMapper JSON = new ObjectMapper();

  @BeforeEach
  void acceptSubmits() {
    server.on("POST", "/api/v1/jobs", 201, "{\"id\":42}");
  }

  private String sent() {
    return server.only("POST", "/api/v1/jobs").body();
  }

  @Test
  void aRangeOfGpusIsTheMinimumAndMaxGpus() throws IOException {
    kairos("submit", "--gpus", "8-32", "--gpus-per-node", "8", "--", "torchrun", "train.py")
        .assertOk();
    var body = JSON.readTree(sent());
    assertThat(body.get("gpus").asInt()).isEqualTo(8);
    assertThat(body.get("maxGpus").asInt()).isEqualTo(32);
    assertThat(body.get("gpusPerNode").asInt()).isEqualTo(8);
  }

  @Test
  void aPlainCountSendsNoMaximum() throws IOException {
    kairos("submit", "--gpus", "16", "--gpus-per-node", "8", "--", "x").assertOk();
    var body = JSON.readTree(sent());
    assertThat(body.get("gpus").asInt()).isEqualTo(16);
    assertThat(body.has("maxGpus")).isFalse();
  }

  @Test
  void aJobFileRangeAndTheFlagOverridingIt() throws IOException {
    Files.writeString(
        dir.resolve("job.yaml"), "command: [torchrun, train.py]\ngpus: 16-32\ngpusPerNode: 8\n");
    kairos("submit", "job.yaml").assertOk();
    var body = JSON.readTree(sent());
    assertThat(body.get("gpus").asInt()).isEqualTo(16);
    assertThat(body.get("maxGpus").asInt()).isEqualTo(32);
  }

  @Test
  void aFixedCountOnTheCommandLineOverridesTheFilesRange() throws IOException {
    Files.writeString(
        dir.resolve("job.yaml"), "command: [torchrun, train.py]\ngpus: 16-32\ngpusPerNode: 8\n");
    kairos("submit", "--gpus", "8", "job.yaml").assertOk();
    var body = JSON.readTree(sent());
    assertThat(body.get("gpus").asInt()).isEqualTo(8);
    assertThat(body.has("maxGpus")).isFalse();
  }

  @Test
  void theDocumentedExampleJobFileIsAnElasticTorchrunJob() throws IOException {
    var file = java.nio.file.Path.of("..", "docs", "examples", "elastic.yaml").toAbsolutePath();
    kairos("submit", file.normalize().toString()).assertOk();
    var body = JSON.readTree(sent());
    assertThat(body.get("gpus").asInt()).isEqualTo(1);
    assertThat(body.get("maxGpus").asInt()).isEqualTo(3);
    assertThat(body.get("gpusPerNode").asInt()).isEqualTo(1);
    assertThat(body.get("command").get(1).asText()).isEqualTo("docs/examples/torchrun_elastic.sh");
    assertThat(body.get("checkpoint").get("signal").asText()).isEqualTo("USR1");
    assertThat(body.get("checkpointDir").asText()).startsWith("/");
  }

  @Test
  void aBackwardRangeOrBadTextIsAUsageErrorNamingTheOption() throws IOException {
    kairos("submit", "--gpus", "32-8", "--gpus-per-node", "8", "--", "x")
        .assertError(2, "--gpus: the range 32-8 ends below its start");
    kairos("submit", "--gpus", "eight", "--", "x").assertError(2, "--gpus: expected a GPU count");
    Files.writeString(dir.resolve("bad.yaml"), "command: [x]\ngpus: 32-8\n");
    kairos("submit", "bad.yaml").assertError(2, "bad.yaml: gpus: the range 32-8 ends below");
    Files.writeString(dir.resolve("both.yaml"), "command: [x]\ngpus: 8-16\nmaxGpus: 16\n");
    kairos("submit", "both.yaml").assertError(2, "both.yaml: gpus gives a range and maxGpus");
  }
}

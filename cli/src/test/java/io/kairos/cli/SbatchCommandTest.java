package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code kairos sbatch} as sbatch: what it sends (the script's text, its directives under the
 * command line's options, the shell's environment as --export says, Slurm's default output file)
 * and what it prints (sbatch's lines and errors).
 */
class SbatchCommandTest extends ClientTestSupport {
  private static final ObjectMapper JSON = new ObjectMapper();

  @BeforeEach
  void acceptJobs() {
    server.on("POST", "/api/v1/jobs", 201, "{\"id\":42}");
  }

  private JsonNode sent() throws IOException {
    return JSON.readTree(server.only("POST", "/api/v1/jobs").body());
  }

  private Path write(String name, String content) throws IOException {
    return Files.writeString(dir.resolve(name), content);
  }

  @Test
  void aScriptIsSentWithItsTextWhateverItsModeAndPrintedAsSbatchDoes() throws IOException {
    String text = "#!/bin/bash\n#SBATCH -J train --gres=gpu:a100:2\npython train.py\n";
    write("train.sh", text); // 0644: sbatch needs no execute bit
    env.put("PATH", "/opt/conda/bin:/usr/bin");

    var r = kairos("sbatch", "train.sh", "--lr", "0.1");

    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out()).isEqualTo("Submitted batch job 42\n");
    JsonNode job = sent();
    assertThat(job.path("script").asText()).isEqualTo(text);
    assertThat(job.path("command").toString())
        .isEqualTo("[\"" + dir.resolve("train.sh") + "\",\"--lr\",\"0.1\"]");
    assertThat(job.path("name").asText()).isEqualTo("train");
    assertThat(job.path("gpus").asInt()).isEqualTo(2);
    assertThat(job.path("gpuModel").asText()).isEqualTo("a100");
    assertThat(job.path("workdir").asText()).isEqualTo(dir.toString());
    assertThat(job.path("output").asText()).isEqualTo(dir.resolve("slurm-%j.out").toString());
    // --export=ALL: the shell's variables, never Kairos' own (the token).
    assertThat(job.path("env").path("PATH").asText()).isEqualTo("/opt/conda/bin:/usr/bin");
    assertThat(job.path("env").has("KAIROS_TOKEN")).isFalse();
    assertThat(job.path("env").has("KAIROS_SERVER")).isFalse();
  }

  @Test
  void commandLineOptionsAndPrefixesOverrideTheScriptsLines() throws IOException {
    write("job.sh", "#!/bin/sh\n#SBATCH -p short --time=10\ntrue\n");

    var r =
        kairos("sbatch", "--parsable", "--parti=Long", "-t", "1:00:00", "--out=o.txt", "job.sh");

    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out()).isEqualTo("42\n");
    JsonNode job = sent();
    assertThat(job.path("queue").asText()).isEqualTo("Long");
    assertThat(job.path("timeLimit").asText()).isEqualTo("1:00:00");
    assertThat(job.path("output").asText()).isEqualTo(dir.resolve("o.txt").toString());
  }

  @Test
  void theScriptOnStdinAndWrap() throws IOException {
    Environment.stdin =
        () -> new ByteArrayInputStream("#!/bin/sh\necho hi\n".getBytes(StandardCharsets.UTF_8));

    assertThat(kairos("sbatch").code()).isZero();
    JsonNode job = sent();
    assertThat(job.path("script").asText()).isEqualTo("#!/bin/sh\necho hi\n");
    assertThat(job.path("name").asText()).isEqualTo("sbatch");
  }

  @Test
  void wrapMakesAOneLineScript() throws IOException {
    var r = kairos("sbatch", "--wrap", "python train.py --x");

    assertThat(r.code()).as(r.err()).isZero();
    JsonNode job = sent();
    assertThat(job.path("script").asText()).endsWith("\npython train.py --x\n").startsWith("#!");
    assertThat(job.path("name").asText()).isEqualTo("wrap");
  }

  @Test
  void exportNoneSendsNoVariables() throws IOException {
    write("job.sh", "#!/bin/sh\ntrue\n");
    env.put("FOO", "1");
    env.put("BAR", "2");

    assertThat(kairos("sbatch", "--export=NONE", "job.sh").code()).isZero();
    assertThat(sent().has("env")).isFalse();
  }

  @Test
  void exportAListSendsThoseAndTheAssignments() throws IOException {
    write("job.sh", "#!/bin/sh\n#SBATCH --export=FOO,X=y\ntrue\n");
    env.put("FOO", "1");
    env.put("BAR", "2");

    assertThat(kairos("sbatch", "job.sh").code()).isZero();
    assertThat(sent().path("env").toString()).isEqualTo("{\"FOO\":\"1\",\"X\":\"y\"}");
  }

  @Test
  void aScriptWithoutInterpreterLineIsRefusedWithSbatchsMessage() throws IOException {
    write("job.sh", "echo hi\n");

    var r = kairos("sbatch", "job.sh");

    assertThat(r.code()).isEqualTo(1);
    assertThat(r.err())
        .isEqualTo(
            "sbatch: error: This does not look like a batch script.  The first line must start"
                + " with #! followed by the path to an interpreter. For instance: #!/bin/sh\n");
    assertThat(server.requests()).isEmpty();
  }

  @Test
  void aMissingFileAndAnAmbiguousPrefixAreOneLineErrors() throws IOException {
    write("job.sh", "#!/bin/sh\ntrue\n");
    var missing = kairos("sbatch", "nope.sh");
    var ambiguous = kairos("sbatch", "--o=x", "job.sh");

    assertThat(missing.code()).isEqualTo(1);
    assertThat(missing.err()).isEqualTo("sbatch: error: Unable to open file nope.sh\n");
    assertThat(ambiguous.code()).isEqualTo(1);
    assertThat(ambiguous.err()).startsWith("sbatch: error: --o=x: the option is ambiguous");
    assertThat(server.requests()).isEmpty();
  }

  @Test
  void theControllersWarningsArePrintedAsSbatchWarnings() throws IOException {
    server.on(
        "POST",
        "/api/v1/jobs",
        201,
        "{\"id\":7,\"warnings\":[\"--qos=normal was ignored: this controller has no priority"
            + " classes (the job runs without one)\"]}");
    write("job.sh", "#!/bin/sh\n#SBATCH --qos=normal --mail-type=END\ntrue\n");

    var r = kairos("sbatch", "job.sh");

    assertThat(r.out()).isEqualTo("Submitted batch job 7\n");
    assertThat(r.err())
        .contains("sbatch: warning: #SBATCH --mail-type=END is not supported and was ignored")
        .contains("sbatch: warning: --qos=normal was ignored: this controller has no priority");
    assertThat(sent().path("qos").asText()).isEqualTo("normal");
  }
}

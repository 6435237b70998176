package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kairos.cli.FakeKairos.Reply;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@code kairos submit}: the JobSubmission sent for flags, job files and scripts. */
class SubmitCommandTest extends ClientTestSupport {
  private static final ObjectMapper JSON = new ObjectMapper();

  @BeforeEach
  void acceptSubmits() {
    server.on("POST", "/api/v1/jobs", 201, "{\"id\":42}");
  }

  private String sent() {
    return server.only("POST", "/api/v1/jobs").body();
  }

  private void assertSent(String expectedJson) throws IOException {
    assertThat(JSON.readTree(sent())).isEqualTo(JSON.readTree(expectedJson));
  }

  private Path write(String name, String content) throws IOException {
    return Files.writeString(dir.resolve(name), content);
  }

  @Test
  void flagsBecomeTheSubmission() throws IOException {
    var r =
        kairos(
                "submit",
                "--name",
                "train",
                "--gpus",
                "16",
                "--gpus-per-node",
                "8",
                "--cpus",
                "4",
                "--mem",
                "4G",
                "--time",
                "2h",
                "--queue",
                "research",
                "--priority",
                "5",
                "--gpu-model",
                "H100",
                "--env",
                "A=1",
                "--env",
                "B=x=y",
                "--",
                "python",
                "train.py",
                "--lr",
                "0.1")
            .assertOk();
    assertThat(r.out()).isEqualTo("Submitted job 42\n");
    assertSent(
        """
        {"name":"train","command":["python","train.py","--lr","0.1"],"env":{"A":"1","B":"x=y"},
         "workdir":"%s","gpus":16,"gpusPerNode":8,"cpus":4,"memoryMb":4096,"timeLimit":"2h",
         "queue":"research","priority":5,"gpuModel":"H100"}"""
            .formatted(dir));
    var request = server.only("POST", "/api/v1/jobs");
    assertThat(request.header("Authorization")).isEqualTo("Bearer " + TOKEN);
    assertThat(request.header("Content-Type")).isEqualTo("application/json");
  }

  @Test
  void checkpointAndSignalFlagsBecomeTheSubmission() throws IOException {
    kairos(
            "submit",
            "--gpus",
            "8",
            "--kill-signal",
            "INT",
            "--grace",
            "2m",
            "--signal",
            "USR1@300",
            "--checkpoint-dir",
            "ckpt",
            "--max-restarts",
            "3",
            "--exclude",
            "n4,n7",
            "--",
            "torchrun",
            "train.py")
        .assertOk();
    assertSent(
        """
        {"command":["torchrun","train.py"],"workdir":"%s","gpus":8,"killSignal":"INT",
         "gracePeriod":"2m","warnSignal":"USR1@300","checkpointDir":"%s","maxRestarts":3,
         "excludeNodes":["n4","n7"]}"""
            .formatted(dir, dir.resolve("ckpt")));
  }

  @Test
  void theCheckpointFlagDeclaresCheckpoints() throws IOException {
    kairos("submit", "--checkpoint", "signal=USR2,timeout=90s,keep=5", "--", "python3", "train.py")
        .assertOk();
    assertSent(
        """
        {"command":["python3","train.py"],"workdir":"%s",
         "checkpoint":{"signal":"USR2","timeout":"90s","keep":5}}"""
            .formatted(dir));
  }

  @Test
  void theCheckpointFlagAloneTakesTheDefaultsAndABadKeyIsAnError() throws IOException {
    kairos("submit", "--checkpoint", "--", "python3", "train.py").assertOk();
    assertSent(
        "{\"command\":[\"python3\",\"train.py\"],\"workdir\":\"" + dir + "\",\"checkpoint\":{}}");
    var bad = kairos("submit", "--checkpoint", "evry=1m", "--", "python3", "train.py");
    assertThat(bad.code()).isNotZero();
    assertThat(bad.err()).contains("--checkpoint").contains("evry=1m");
  }

  @Test
  void onlyTheCommandAndWorkdirWhenNoFlags() throws IOException {
    kairos("submit", "--", "hostname").assertOk();
    assertSent("{\"command\":[\"hostname\"],\"workdir\":\"" + dir + "\"}");
  }

  @Test
  void aRelativeWorkdirIsMadeAbsolute() throws IOException {
    kairos("submit", "--workdir", "sub/dir", "--", "hostname").assertOk();
    assertSent("{\"command\":[\"hostname\"],\"workdir\":\"" + dir.resolve("sub/dir") + "\"}");
  }

  @Test
  void aYamlJobFileBecomesTheSubmission() throws IOException {
    write(
        "job.yaml",
        """
        name: resnet
        command: [python, train.py, --epochs, "90"]
        gpus: 16
        gpusPerNode: 8
        memoryMb: 2048
        timeLimit: 1:30:00
        env:
          NCCL_DEBUG: INFO
        workdir: /data/resnet
        """);
    kairos("submit", "job.yaml").assertOk();
    assertSent(
        """
        {"name":"resnet","command":["python","train.py","--epochs","90"],
         "env":{"NCCL_DEBUG":"INFO"},"workdir":"/data/resnet","gpus":16,"gpusPerNode":8,
         "memoryMb":2048,"timeLimit":"1:30:00"}""");
  }

  @Test
  void aJobFileDeclaresCheckpointsAndAMistypedKeyIsNamed() throws IOException {
    write(
        "job.yaml",
        """
        command: [python3, train.py]
        gpus: 1
        workdir: /data
        checkpoint: {signal: USR1, timeout: 2m, every: 10m, keep: 3}
        """);
    kairos("submit", "job.yaml").assertOk();
    assertSent(
        """
        {"command":["python3","train.py"],"workdir":"/data","gpus":1,
         "checkpoint":{"signal":"USR1","timeout":"2m","every":"10m","keep":3}}""");
    write("bad.yaml", "command: [python3, train.py]\ncheckpoint: {evry: 10m}\n");
    var bad = kairos("submit", "bad.yaml");
    assertThat(bad.code()).isNotZero();
    assertThat(bad.err()).contains("evry");
  }

  @Test
  void aJsonJobFileWorksToo() throws IOException {
    write("job.json", "{\"command\":[\"true\"],\"gpus\":1,\"timeLimit\":3600}");
    kairos("submit", "job.json").assertOk();
    assertSent(
        "{\"command\":[\"true\"],\"gpus\":1,\"timeLimit\":\"3600\",\"workdir\":\"" + dir + "\"}");
  }

  @Test
  void flagsOverrideTheFile() throws IOException {
    write(
        "job.yaml",
        """
        command: [python, train.py]
        gpus: 2
        queue: a
        env: {A: "1", B: "2"}
        """);
    kairos("submit", "--gpus", "4", "--env", "B=3", "--mem", "512M", "job.yaml").assertOk();
    assertSent(
        """
        {"command":["python","train.py"],"gpus":4,"queue":"a","env":{"A":"1","B":"3"},
         "memoryMb":512,"workdir":"%s"}"""
            .formatted(dir));
  }

  @Test
  void anUnknownKeyInTheFileNamesItAndListsTheValidOnes() throws IOException {
    write("job.yaml", "command: [x]\ngpu: 4\n");
    kairos("submit", "job.yaml")
        .assertError(
            2,
            "job.yaml: unknown key 'gpu'",
            "did you mean 'gpus'?",
            "valid keys: name, command, env, workdir, gpus, gpusPerNode,"
                + " cpus, memoryMb, timeLimit, queue, priority, gpuModel, user");
    assertThat(server.requests()).isEmpty();
  }

  @Test
  void aValueOfTheWrongTypeNamesTheKey() throws IOException {
    write("job.yaml", "command: [x]\ngpus: eight\n");
    kairos("submit", "job.yaml").assertError(2, "job.yaml: gpus: expected a whole number");
    write("cmd.yaml", "command: python train.py\n");
    kairos("submit", "cmd.yaml").assertError(2, "cmd.yaml: command: expected a list of strings");
  }

  @Test
  void brokenYamlSaysWhere() throws IOException {
    write("job.yaml", "command: [x\ngpus: 1\n");
    kairos("submit", "job.yaml").assertError(2, "job.yaml: not valid YAML: line ");
  }

  @Test
  void aFileWithoutCommandIsRefused() throws IOException {
    write("job.yaml", "gpus: 1\n");
    kairos("submit", "job.yaml").assertError(2, "job.yaml: no command");
  }

  @Test
  void aMissingFileSaysHowToRunAProgram() {
    kairos("submit", "hostname")
        .assertError(2, "no such job file: hostname", "kairos submit [options] -- hostname");
  }

  @Test
  void nothingToRunIsAUsageError() {
    kairos("submit", "--gpus", "1").assertError(2, "nothing to run");
  }

  @Test
  void aScriptIsSentWithItsTextAndNamedByItsAbsolutePath() throws IOException {
    var script = write("train.sh", "#!/bin/bash\npython train.py\n");
    kairos("submit", "--gpus", "1", "train.sh", "arg1").assertOk();
    assertSent(
        """
        {"name":"train.sh","command":["%s","arg1"],"gpus":1,"workdir":"%s",
         "script":"#!/bin/bash\\npython train.py\\n"}"""
            .formatted(script.toAbsolutePath(), dir));
  }

  @Test
  void jsonOutputIsTheReply() throws IOException {
    var r = kairos("submit", "-o", "json", "--", "true").assertOk();
    assertThat(JSON.readTree(r.out())).isEqualTo(JSON.readTree("{\"id\":42}"));
  }

  @Test
  void waitExitsWithTheJobsExitCode() {
    var polls = new AtomicInteger();
    server.on(
        "GET",
        "/api/v1/jobs/42",
        r ->
            Reply.json(
                200,
                polls.incrementAndGet() == 1
                    ? job(
                        42,
                        "RUNNING",
                        ",\"startTime\":\"2026-03-28T11:56:00Z\",\"placement\":[{\"task\":0,\"node\":\"n1\",\"gpus\":[0]}]")
                    : job(42, "FAILED", ",\"exitCode\":3,\"message\":\"exit code 3 on node n1\"")));
    var r = kairos("submit", "--wait", "--", "false");
    assertThat(r.code()).isEqualTo(3);
    assertThat(r.err()).isEmpty();
    assertThat(r.out())
        .isEqualTo(
            "Submitted job 42\nJob 42 RUNNING on n1\nJob 42 FAILED: exit code 3 on node n1\n");
  }

  @Test
  void waitOnASuccessExitsZero() {
    server.on("GET", "/api/v1/jobs/42", 200, job(42, "SUCCEEDED", ",\"exitCode\":0"));
    var r = kairos("submit", "--wait", "--", "true").assertOk();
    assertThat(r.out()).isEqualTo("Submitted job 42\nJob 42 SUCCEEDED\n");
  }

  @Test
  void memorySizes() {
    assertThat(SubmitCommand.memoryMb("4G")).isEqualTo(4096);
    assertThat(SubmitCommand.memoryMb("512M")).isEqualTo(512);
    assertThat(SubmitCommand.memoryMb("512")).isEqualTo(512);
    assertThat(SubmitCommand.memoryMb("1.5g")).isEqualTo(1536);
    assertThat(SubmitCommand.memoryMb("2GiB")).isEqualTo(2048);
    assertThat(SubmitCommand.memoryMb("1T")).isEqualTo(1024 * 1024);
    assertThat(SubmitCommand.memoryMb("100K")).isEqualTo(1);
    assertThatThrownBy(() -> SubmitCommand.memoryMb("lots"))
        .isInstanceOf(UsageException.class)
        .hasMessageContaining("--mem: cannot read 'lots'");
  }

  @Test
  void badMemoryIsAUsageError() {
    kairos("submit", "--mem", "4X", "--", "true").assertError(2, "--mem: cannot read '4X'");
    assertThat(server.requests()).isEmpty();
  }

  @Test
  void aSlurmScriptsDirectivesBecomeTheSubmission() throws IOException {
    var script =
        write(
            "train.sh",
            """
        #!/bin/bash
        #SBATCH --job-name=llama
        #SBATCH -N 2 --gres=gpu:h100:8
        #SBATCH --time=1-12:00:00 --partition=research
        #SBATCH -c 16 --mem=256G -x gpu[03-04]
        #SBATCH --signal=USR1@120
        #SBATCH -o logs/%x-%j.%t.out
        #KAIROS --max-restarts 2 --checkpoint-dir /ckpt/llama
        torchrun train.py
        """);
    kairos("submit", "train.sh", "lr=0.1").assertOk();
    assertSent(
        """
        {"name":"llama","command":["%s","lr=0.1"],"workdir":"%s","gpus":16,"gpusPerNode":8,
         "cpus":16,"memoryMb":262144,"timeLimit":"36:00:00","queue":"research","gpuModel":"h100",
         "warnSignal":"USR1@120","checkpointDir":"/ckpt/llama","maxRestarts":2,
         "excludeNodes":["gpu03","gpu04"],"output":"%s","script":%s}"""
            .formatted(
                script.toAbsolutePath(),
                dir,
                dir.resolve("logs/%x-%j.%t.out"),
                JSON.writeValueAsString(Files.readString(script))));
  }

  @Test
  void flagsOverrideTheDirectives() throws IOException {
    write(
        "train.sh",
        """
        #!/bin/sh
        #SBATCH -J a -t 10 -p slow --gres=gpu:2 -o /l/a.out
        #KAIROS --priority 3
        true
        """);
    kairos(
            "submit",
            "--name",
            "b",
            "--time",
            "2h",
            "--queue",
            "fast",
            "--gpus",
            "4",
            "--priority",
            "7",
            "--stdout",
            "/l/b.out",
            "--workdir",
            "/w",
            "train.sh")
        .assertOk();
    assertSent(
        """
        {"name":"b","command":["%s"],"workdir":"/w","gpus":4,"timeLimit":"2h","queue":"fast",
         "priority":7,"output":"/l/b.out","script":%s}"""
            .formatted(
                dir.resolve("train.sh"),
                JSON.writeValueAsString(Files.readString(dir.resolve("train.sh")))));
  }

  @Test
  void chdirMakesRelativeOutputPathsRelativeToIt() throws IOException {
    write("job.sh", "#!/bin/sh\n#SBATCH -D /scratch/run -o out/%j.log -e err.log\ntrue\n");
    kairos("submit", "job.sh").assertOk();
    assertSent(
        """
        {"name":"job.sh","command":["%s"],"workdir":"/scratch/run",
         "output":"/scratch/run/out/%%j.log","error":"/scratch/run/err.log",
         "script":"#!/bin/sh\\n#SBATCH -D /scratch/run -o out/%%j.log -e err.log\\ntrue\\n"}"""
            .formatted(dir.resolve("job.sh")));
  }

  @Test
  void unsupportedDirectivesAreWarnedAboutAndTheJobIsSubmitted() throws IOException {
    write("job.sh", "#!/bin/sh\n#SBATCH --mail-type=END\n#SBATCH -A physics\ntrue\n");
    var r = kairos("submit", "job.sh");
    assertThat(r.code()).isZero();
    assertThat(r.out()).isEqualTo("Submitted job 42\n");
    assertThat(r.err())
        .isEqualTo(
            "kairos: #SBATCH --mail-type=END is not supported and was ignored (job.sh line 2)\n");
    assertSent(
        "{\"name\":\"job.sh\",\"command\":[\""
            + dir.resolve("job.sh")
            + "\"],"
            + "\"workdir\":\""
            + dir
            + "\",\"account\":\"physics\","
            + "\"script\":\"#!/bin/sh\\n#SBATCH --mail-type=END\\n#SBATCH -A physics\\ntrue\\n\"}");
  }

  @Test
  void accountAndPriorityClassOptionsOverrideTheScriptsAccountAndQos() throws IOException {
    write("job.sh", "#!/bin/sh\n#SBATCH -A physics\n#SBATCH --qos=low\ntrue\n");
    kairos("submit", "--account", "vision", "--priority-class", "high", "job.sh").assertOk();
    assertSent(
        "{\"name\":\"job.sh\",\"command\":[\""
            + dir.resolve("job.sh")
            + "\"],"
            + "\"workdir\":\""
            + dir
            + "\",\"account\":\"vision\",\"priorityClass\":\"high\",\"qos\":\"low\","
            + "\"script\":\"#!/bin/sh\\n#SBATCH -A physics\\n#SBATCH --qos=low\\ntrue\\n\"}");
  }

  @Test
  void aBadDirectiveNamesTheLineAndSendsNothing() throws IOException {
    write("job.sh", "#!/bin/sh\n#SBATCH -J x\n#SBATCH --time=soon\ntrue\n");
    kairos("submit", "job.sh")
        .assertError(
            2,
            "kairos: job.sh line 3: #SBATCH --time=soon: cannot read the time 'soon'; write minutes");
    assertThat(server.requests()).isEmpty();
  }

  @Test
  void aScriptWithoutShebangIsStoredWithOne() throws IOException {
    write("job.sh", "#SBATCH -G 1\npython train.py\n");
    kairos("submit", "job.sh").assertOk();
    assertSent(
        """
        {"name":"job.sh","command":["%s"],"workdir":"%s","gpus":1,
         "script":"#!/bin/sh\\n#SBATCH -G 1\\npython train.py\\n"}"""
            .formatted(dir.resolve("job.sh"), dir));
  }

  /**
   * Seeded random scripts of directives, good and bad, through the whole command: each is submitted
   * (exit 0) or refused as bad input (exit 2), never a crash or a stack trace. (500 more go through
   * the parser alone in {@link BatchScriptTest}.)
   */
  @Test
  void randomScriptsAreSubmittedOrRefusedNeverCrash() throws IOException {
    var random = new java.util.Random(20260328);
    for (int seed = 0; seed < 40; seed++) {
      String text = BatchScriptTest.randomScript(random);
      write("fuzz.sh", text);
      var r = kairos("submit", "fuzz.sh");
      assertThat(r.code()).as("seed %d, script:%n%s%nstderr: %s", seed, text, r.err()).isIn(0, 2);
      assertThat(r.err())
          .as("seed %d, script:%n%s", seed, text)
          .doesNotContain("\tat ")
          .doesNotContain("Exception")
          .doesNotContain("internal error");
      if (r.code() == 2) {
        assertThat(
                r.err()
                    .strip()
                    .lines()
                    .filter(
                        l ->
                            !l.contains("was ignored")
                                && !l.contains("was noted")
                                && !l.contains("srun"))
                    .count())
            .as("seed %d: one error line: %s", seed, r.err())
            .isEqualTo(1);
      }
    }
  }
}

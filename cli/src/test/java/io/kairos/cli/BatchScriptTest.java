package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kairos.protocol.JobSubmission;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The {@code #SBATCH} and {@code #KAIROS} directives of a script, one row per case. */
class BatchScriptTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Path CWD = Path.of("/home/alice/run");

  @BeforeEach
  void fixWorkingDirectory() {
    Environment.workingDirectory = CWD;
  }

  @AfterEach
  void restore() {
    Environment.reset();
  }

  /**
   * One row: the directive lines (after "#!/bin/bash", so the first is line 2), and either the
   * submission they make (JSON, the #KAIROS layer over the #SBATCH one) with the warnings it must
   * print, or the error that must name the line.
   */
  record Case(String name, String directives, String json, List<String> warnings, String error) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Case ok(String name, String directives, String json) {
    return new Case(name, directives, json, List.of(), null);
  }

  static Case warns(String name, String directives, String json, String... warnings) {
    return new Case(name, directives, json, List.of(warnings), null);
  }

  static Case bad(String name, String directives, String error) {
    return new Case(name, directives, null, List.of(), error);
  }

  static Stream<Case> cases() {
    return Stream.of(
        // names and the forms of an option
        ok("job name, long with =", "#SBATCH --job-name=train", "{'name':'train'}"),
        ok("job name, long with a space", "#SBATCH --job-name train", "{'name':'train'}"),
        ok("job name, short", "#SBATCH -J train", "{'name':'train'}"),
        ok("job name, short attached", "#SBATCH -Jtrain", "{'name':'train'}"),
        ok("job name quoted", "#SBATCH --job-name=\"my run\"", "{'name':'my run'}"),
        ok("a trailing comment", "#SBATCH -J train   # the name", "{'name':'train'}"),
        ok(
            "several options on one line",
            "#SBATCH -J a -t 10 -p gpu",
            "{'name':'a','timeLimit':'0:10:00','queue':'gpu'}"),
        ok("a later line wins", "#SBATCH -J a\n#SBATCH -J b", "{'name':'b'}"),
        ok("disabled directives are comments", "##SBATCH -J a\n# SBATCH -J b", "{}"),
        // nodes and GPUs
        ok("gres gpu count", "#SBATCH --gres=gpu:4", "{'gpus':4}"),
        ok("gres gpu model and count", "#SBATCH --gres=gpu:h100:8", "{'gpus':8,'gpuModel':'h100'}"),
        ok("gres gpu alone is one", "#SBATCH --gres=gpu", "{'gpus':1}"),
        ok("nodes with gres", "#SBATCH -N 2\n#SBATCH --gres=gpu:8", "{'gpus':16,'gpusPerNode':8}"),
        ok(
            "nodes long with gpus-per-node",
            "#SBATCH --nodes=4 --gpus-per-node=8",
            "{'gpus':32,'gpusPerNode':8}"),
        ok(
            "gpus-per-node with a model",
            "#SBATCH -N 2 --gpus-per-node=a100:4",
            "{'gpus':8,'gpusPerNode':4,'gpuModel':'a100'}"),
        ok("total gpus, short", "#SBATCH -G 4", "{'gpus':4}"),
        ok("total gpus over nodes", "#SBATCH --nodes=2 --gpus=16", "{'gpus':16,'gpusPerNode':8}"),
        ok("total gpus with a model", "#SBATCH --gpus=h100:2", "{'gpus':2,'gpuModel':'h100'}"),
        ok(
            "total gpus matching nodes x per node",
            "#SBATCH -N 2 --gres=gpu:4 -G 8",
            "{'gpus':8,'gpusPerNode':4}"),
        ok(
            "one task per node",
            "#SBATCH -N 2 --ntasks-per-node=1 --gres=gpu:8 --ntasks=2",
            "{'gpus':16,'gpusPerNode':8,'ntasks':2,'ntasksPerNode':1}"),
        ok(
            "one task per GPU (script 16)",
            "#SBATCH --nodes=2 --ntasks-per-node=4 --gres=gpu:v100:4",
            "{'gpus':8,'gpusPerNode':4,'gpuModel':'v100','ntasksPerNode':4}"),
        ok(
            "gpus per task alone (script 12)",
            "#SBATCH --nodes=4 --ntasks=4 --gpus-per-task=1",
            "{'gpus':4,'gpusPerNode':1,'ntasks':4,'gpusPerTask':1}"),
        ok(
            "gpus per task with tasks per node",
            "#SBATCH -N 2 --ntasks-per-node=2 --gpus-per-task=2",
            "{'gpus':8,'gpusPerNode':4,'ntasksPerNode':2,'gpusPerTask':2}"),
        bad(
            "gpus per task over uneven tasks",
            "#SBATCH -N 2 --ntasks=5 --gpus-per-task=1",
            "5 tasks do not spread evenly over 2 nodes"),
        ok("gres path form", "#SBATCH --gres=gres/gpu:2", "{'gpus':2}"),
        ok("nodes without GPUs", "#SBATCH --nodes=2", "{'nodes':2}"),
        ok(
            "unambiguous prefix",
            "#SBATCH --out=/l/x.out --parti=gpu",
            "{'output':'/l/x.out','queue':'gpu'}"),
        ok(
            "tasks-per-node is ntasks-per-node",
            "#SBATCH --tasks-per-node=1",
            "{'ntasksPerNode':1}"),
        bad(
            "ambiguous prefix",
            "#SBATCH --o=/l/x.out",
            "job.sh line 2: #SBATCH --o=/l/x.out: the option is ambiguous (as in sbatch): it may be"
                + " --open-mode, --output, --overcommit, --oversubscribe"),
        bad(
            "a node range",
            "#SBATCH --nodes=2-4",
            "line 2: #SBATCH --nodes=2-4: Kairos takes an exact node count"),
        bad("zero nodes", "#SBATCH -N 0", "line 2: #SBATCH -N 0: '0' is not a node count"),
        ok("ntasks-per-node 2", "#SBATCH --ntasks-per-node=2", "{'ntasksPerNode':2}"),
        bad(
            "gpus that do not split",
            "#SBATCH -N 3\n#SBATCH --gpus=8",
            "line 3: #SBATCH --gpus=8: 8 GPUs do not split evenly over 3 nodes"),
        bad(
            "gpus disagreeing with gres",
            "#SBATCH -N 2 --gres=gpu:8\n#SBATCH -G 8",
            "line 3: #SBATCH -G 8: asks for 8 GPUs in total"),
        bad(
            "two GPU models",
            "#SBATCH --gres=gpu:h100:8\n#SBATCH --gpus-per-node=a100:8",
            "line 3: #SBATCH --gpus-per-node=a100:8: asks for GPU model a100 after h100"),
        bad(
            "a GPU count that is a word",
            "#SBATCH --gres=gpu:h100:many",
            "'many' is not a GPU count"),
        warns(
            "another gres",
            "#SBATCH --gres=gpu:2,nvme:1",
            "{'gpus':2}",
            "#SBATCH --gres=gpu:2,nvme:1 is not supported and was ignored: Kairos knows only the gpu resource; 'nvme:1' was ignored (job.sh line 2)"),
        ok("more tasks than nodes", "#SBATCH --ntasks=8", "{'ntasks':8}"),
        // time
        ok("time in minutes", "#SBATCH --time=90", "{'timeLimit':'1:30:00'}"),
        ok("time M:S", "#SBATCH -t 5:30", "{'timeLimit':'0:05:30'}"),
        ok("time H:M:S", "#SBATCH -t 2:00:00", "{'timeLimit':'2:00:00'}"),
        ok("time D-H", "#SBATCH -t 1-12", "{'timeLimit':'36:00:00'}"),
        ok("time D-H:M", "#SBATCH --time=2-03:30", "{'timeLimit':'51:30:00'}"),
        ok("time D-H:M:S", "#SBATCH --time=1-00:00:10", "{'timeLimit':'24:00:10'}"),
        bad(
            "time unreadable",
            "#SBATCH --time=abc",
            "job.sh line 2: #SBATCH --time=abc: cannot read the time 'abc'; write minutes"),
        bad(
            "time unlimited",
            "#SBATCH -t UNLIMITED",
            "line 2: #SBATCH -t UNLIMITED: Kairos needs a time limit"),
        bad("time zero", "#SBATCH -t 0", "a time limit of 0 means none in Slurm"),
        bad("time over a year", "#SBATCH -t 400-00:00:00", "over 365 days"),
        bad(
            "time without a value",
            "#SBATCH --time",
            "line 2: #SBATCH --time: needs a value; write --time=VALUE"),
        // queue, CPUs, memory
        ok("partition long", "#SBATCH --partition=research", "{'queue':'research'}"),
        ok("partition short", "#SBATCH -p research", "{'queue':'research'}"),
        bad("several partitions", "#SBATCH -p a,b", "Kairos takes one queue, not a list"),
        ok("cpus per task", "#SBATCH --cpus-per-task=8", "{'cpus':8}"),
        ok("cpus per task short", "#SBATCH -c 8", "{'cpus':8}"),
        bad("cpus zero", "#SBATCH -c 0", "line 2: #SBATCH -c 0: '0' is not a CPU count"),
        ok("memory in MiB by default", "#SBATCH --mem=16000", "{'memoryMb':16000}"),
        ok("memory in G", "#SBATCH --mem=64G", "{'memoryMb':65536}"),
        ok("memory in K", "#SBATCH --mem 2048K", "{'memoryMb':2}"),
        ok("memory in T", "#SBATCH --mem=1T", "{'memoryMb':1048576}"),
        bad(
            "memory unreadable",
            "#SBATCH --mem=lots",
            "line 2: #SBATCH --mem=lots: cannot read the size 'lots'"),
        // nodes to avoid
        ok("exclude a list", "#SBATCH --exclude=n1,n2", "{'excludeNodes':['n1','n2']}"),
        ok(
            "exclude a host list",
            "#SBATCH -x gpu[01-03,07],n9",
            "{'excludeNodes':['gpu01','gpu02','gpu03','gpu07','n9']}"),
        ok(
            "exclude two brackets",
            "#SBATCH -x r[1-2]n[1-2]",
            "{'excludeNodes':['r1n1','r1n2','r2n1','r2n2']}"),
        bad("exclude a bad range", "#SBATCH -x n[3-1]", "the range 3-1 counts down"),
        bad("exclude an open bracket", "#SBATCH -x n[1-3", "Invalid hostlist: n[1-3; write"),
        bad(
            "exclude from a file",
            "#SBATCH -x /etc/bad-nodes",
            "Kairos does not read node lists from files"),
        // signals
        ok("signal with a time", "#SBATCH --signal=USR1@120", "{'warnSignal':'USR1@120'}"),
        ok("signal alone", "#SBATCH --signal=SIGUSR2", "{'warnSignal':'USR2'}"),
        ok("signal by number", "#SBATCH --signal=10@90", "{'warnSignal':'USR1@90'}"),
        warns(
            "signal to the batch shell",
            "#SBATCH --signal=B:USR1@60",
            "{'warnSignal':'USR1@60'}",
            "#SBATCH --signal=B:USR1@60: the B: prefix was noted"),
        bad(
            "signal unknown",
            "#SBATCH --signal=KILL@60",
            "'KILL' is not a signal a job may ask for"),
        bad(
            "signal with a bad time",
            "#SBATCH --signal=USR1@soon",
            "'soon' is not a number of seconds"),
        // arrays, dependencies, output
        ok("array", "#SBATCH --array=0-15%4", "{'array':'0-15%4'}"),
        ok("array short", "#SBATCH -a 1,3,5", "{'array':'1,3,5'}"),
        ok("dependency", "#SBATCH --dependency=afterok:12:13", "{'dependency':'afterok:12:13'}"),
        ok("dependency short", "#SBATCH -d afterany:14", "{'dependency':'afterany:14'}"),
        ok(
            "output and error",
            "#SBATCH --output=/logs/%x-%j.out\n#SBATCH -e /logs/%j.err",
            "{'output':'/logs/%x-%j.out','error':'/logs/%j.err'}"),
        ok("output short", "#SBATCH -o slurm-%j.out", "{'output':'slurm-%j.out'}"),
        ok("chdir", "#SBATCH -D /scratch/run", "{'workdir':'/scratch/run'}"),
        ok("open-mode append", "#SBATCH --open-mode=append", "{}"),
        warns(
            "open-mode truncate",
            "#SBATCH --open-mode=truncate",
            "{}",
            "#SBATCH --open-mode=truncate is not supported and was ignored: Kairos always appends"),
        // requeue, account, qos, the rest
        ok("requeue", "#SBATCH --requeue", "{}"),
        warns(
            "no-requeue",
            "#SBATCH --no-requeue",
            "{}",
            "#SBATCH --no-requeue is not supported and was ignored: Kairos always requeues"),
        bad("requeue with a value", "#SBATCH --requeue=yes", "takes no value"),
        ok("account", "#SBATCH -A physics", "{'account':'physics'}"),
        ok("account long", "#SBATCH --account=physics", "{'account':'physics'}"),
        ok("qos goes as qos", "#SBATCH --qos=high", "{'qos':'high'}"),
        ok("qos short", "#SBATCH -q low", "{'qos':'low'}"),
        warns(
            "mail type",
            "#SBATCH --mail-type=END",
            "{}",
            "#SBATCH --mail-type=END is not supported and was ignored (job.sh line 2)"),
        warns(
            "constraint with a space",
            "#SBATCH --constraint ib",
            "{}",
            "#SBATCH --constraint=ib is not supported and was ignored"),
        warns(
            "exclusive takes no value",
            "#SBATCH --exclusive -J x",
            "{'name':'x'}",
            "#SBATCH --exclusive is not supported and was ignored"),
        warns(
            "an unknown short option",
            "#SBATCH -w n4",
            "{}",
            "#SBATCH -w n4 is not supported and was ignored"),
        bad("a stray word", "#SBATCH train", "job.sh line 2: #SBATCH train: not an option"),
        bad("an empty directive", "#SBATCH", "job.sh line 2: #SBATCH: no option"),
        bad(
            "an open quote",
            "#SBATCH -J 'oops",
            "line 2: #SBATCH -J 'oops: a quote (') is not closed"),
        // #KAIROS lines, in kairos submit's words, over #SBATCH
        ok(
            "kairos options",
            "#KAIROS --gpus 8 --max-restarts 3 --checkpoint-dir ckpt",
            "{'gpus':8,'maxRestarts':3,'checkpointDir':'/home/alice/run/ckpt'}"),
        ok(
            "kairos over sbatch",
            "#KAIROS --time 2h --queue fast\n#SBATCH -t 10 -p slow -J x",
            "{'name':'x','timeLimit':'2h','queue':'fast'}"),
        ok(
            "kairos signals and env",
            "#KAIROS --kill-signal INT --grace 2m --signal USR1@300\n"
                + "#KAIROS --env A=1 --env B=2",
            "{'killSignal':'INT','gracePeriod':'2m','warnSignal':'USR1@300','env':{'A':'1','B':'2'}}"),
        ok("kairos later line wins", "#KAIROS --gpus 2\n#KAIROS --gpus 4", "{'gpus':4}"),
        ok(
            "kairos stdout and stderr",
            "#KAIROS --stdout /l/%j.out --stderr /l/%j.err",
            "{'output':'/l/%j.out','error':'/l/%j.err'}"),
        warns(
            "kairos client option",
            "#KAIROS --wait --gpus 1",
            "{'gpus':1}",
            "#KAIROS --wait is an option of the kairos command, not of the job, and was ignored"),
        bad(
            "kairos unknown option",
            "#KAIROS --gpu 8",
            "job.sh line 2: #KAIROS --gpu 8: Unknown option"),
        bad("kairos bad number", "#KAIROS --gpus eight", "job.sh line 2: #KAIROS --gpus eight:"),
        bad(
            "kairos positional",
            "#KAIROS train.py",
            "job.sh line 2: #KAIROS train.py: 'train.py' is not an option"),
        bad(
            "kairos bad memory",
            "#KAIROS --mem 4X",
            "job.sh line 2: #KAIROS --mem 4X: --mem: cannot read '4X'"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void directive(Case c) throws Exception {
    String script = "#!/bin/bash\n" + c.directives() + "\necho hello\n";
    if (c.error() != null) {
      assertThatThrownBy(() -> BatchScript.parse("job.sh", script))
          .isInstanceOf(UsageException.class)
          .hasMessageContaining(c.error());
      return;
    }
    var d = BatchScript.parse("job.sh", script);
    JobSubmission merged = SubmitCommand.over(d.sbatch(), d.kairos());
    assertThat(JSON.readTree(JSON.writeValueAsString(merged)))
        .isEqualTo(JSON.readTree(c.json().replace('\'', '"')));
    if (c.warnings().isEmpty()) {
      assertThat(d.warnings()).isEmpty();
    }
    for (String w : c.warnings()) {
      assertThat(d.warnings()).anySatisfy(line -> assertThat(line).contains(w));
    }
    assertThat(d.warnings()).hasSize(c.warnings().size());
  }

  @Test
  void onlyTheLeadingCommentBlockCounts() {
    var d =
        BatchScript.parse(
            "job.sh",
            """
        #!/bin/bash

        # a comment
        #SBATCH -J first
        cd /data
        #SBATCH -J late
        srun python train.py
        """);
    assertThat(d.sbatch().name()).isEqualTo("first");
    assertThat(d.warnings())
        .containsExactly(
            "#SBATCH on line 6 of job.sh comes after the first command and was ignored (as sbatch"
                + " does); move it above the first command");
  }

  @Test
  void aScriptWithoutShebangIsAShellScriptWhenItHasDirectives() {
    assertThat(BatchScript.isShellScript(Path.of("job"), "#SBATCH -J x\necho\n")).isTrue();
    assertThat(BatchScript.isShellScript(Path.of("job.sh"), "echo\n")).isTrue();
    assertThat(BatchScript.isShellScript(Path.of("job.yaml"), "command: [x]\n")).isFalse();
  }

  @Test
  void slurmTimesAndHostLists() {
    assertThat(SlurmSyntax.timeLimitSec("1")).isEqualTo(60);
    assertThat(SlurmSyntax.timeLimitSec("1:1:1")).isEqualTo(3661);
    assertThat(SlurmSyntax.clock(90061)).isEqualTo("25:01:01");
    assertThat(SlurmSyntax.hostList("a[08-10]")).containsExactly("a08", "a09", "a10");
    assertThatThrownBy(() -> SlurmSyntax.hostList("n[1-100000]"))
        .hasMessageContaining("more than 4096 nodes");
  }

  /** A script of random directives, good and bad, and a command. */
  static String randomScript(Random random) {
    String[] options = {
      "-J",
      "--job-name=",
      "-N",
      "--nodes=",
      "--ntasks-per-node=",
      "--gres=gpu:",
      "--gres=",
      "--gpus-per-node=",
      "-G",
      "--gpus=",
      "-t",
      "--time=",
      "-p",
      "--partition=",
      "-c",
      "--cpus-per-task=",
      "--mem=",
      "-x",
      "--exclude=",
      "--signal=",
      "--signal=B:",
      "-a",
      "--array=",
      "-d",
      "-o",
      "--output=",
      "-e",
      "--error=",
      "--requeue",
      "--no-requeue",
      "-A",
      "-q",
      "--qos=",
      "--mail-type=",
      "--exclusive",
      "--constraint=",
      "-D",
      "--open-mode=",
      "-",
      "--",
      "--=",
      "'",
      "\"",
      "#",
      "\\",
      "%",
      "[",
      "]"
    };
    String[] values = {
      "1",
      "2",
      "8",
      "0",
      "-1",
      "99999999999",
      "h100:4",
      "gpu:a100:2",
      "1-12",
      "2:00:00",
      "1-00:00:00",
      "UNLIMITED",
      "n[1-3]",
      "n[3-1]",
      "n[",
      "USR1@60",
      "KILL",
      "USR1@x",
      "a,b",
      "/tmp/%j.out",
      "%q",
      "x y",
      "",
      ":",
      "::",
      "gpu",
      "4G",
      "lots",
      "afterok:1",
      "0-15%4",
      "é",
      "\t",
      "=",
      "@"
    };
    String[] kairos = {
      "--gpus 2",
      "--gpus x",
      "--time 2h",
      "--max-restarts 3",
      "--checkpoint-dir c",
      "--wait",
      "--nope",
      "stray",
      "--mem 4Q",
      "--env A=1",
      "--stdout /o",
      "--exclude n1,n2",
      "--signal"
    };
    var text = new StringBuilder(random.nextBoolean() ? "#!/bin/bash\n" : "");
    int lines = random.nextInt(8);
    for (int i = 0; i < lines; i++) {
      switch (random.nextInt(6)) {
        case 0 -> text.append("#KAIROS ").append(kairos[random.nextInt(kairos.length)]);
        case 1 -> text.append(random.nextBoolean() ? "" : "# note");
        case 2 -> text.append("echo step");
        default -> {
          text.append("#SBATCH");
          for (int k = random.nextInt(4); k >= 0; k--) {
            String option = options[random.nextInt(options.length)];
            String value = values[random.nextInt(values.length)];
            text.append(' ')
                .append(option)
                .append(option.endsWith("=") ? "" : random.nextBoolean() ? " " : "")
                .append(random.nextInt(4) == 0 ? "" : value);
          }
        }
      }
      text.append('\n');
    }
    return text.append("true\n").toString();
  }

  /** 500 seeded random scripts: each gives a submission or one bad-input message, nothing else. */
  @Test
  void randomScriptsGiveASubmissionOrABadInputMessage() {
    var random = new Random(7);
    for (int seed = 0; seed < 500; seed++) {
      String script = randomScript(random);
      try {
        var d = BatchScript.parse("fuzz.sh", script);
        SubmitCommand.over(d.sbatch(), d.kairos());
      } catch (UsageException e) {
        assertThat(e.getMessage())
            .as("seed %d:%n%s", seed, script)
            .startsWith("fuzz.sh")
            .doesNotContain("\n");
      }
    }
  }
}

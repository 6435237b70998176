package io.kairos.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code scripts/whatif/PreemptiveWhatIf.java}, the preemptive model behind issue 16.2's fifth
 * round (docs/concepts.md), lives outside the build: this compiles it against the simulator and
 * runs it on small generated workloads, so it cannot rot unseen. The model checks its own invariant
 * after every step (no GPU held twice or lost, every job runs exactly its run time) and throws when
 * it breaks, so a run that prints its line has kept it.
 */
class PreemptiveWhatIfScriptTest {
  private static final String WORKLOAD = "gen:jobs=300,load=0.95,max-gpus=32,seed=7";

  @TempDir static Path classes;

  private static Class<?> model;

  @BeforeAll
  static void compile() throws Exception {
    Path source = Path.of("..", "scripts", "whatif", "PreemptiveWhatIf.java");
    assertThat(source).exists();
    var errors = new ByteArrayOutputStream();
    int rc =
        ToolProvider.getSystemJavaCompiler()
            .run(
                null,
                null,
                errors,
                "-nowarn",
                "-cp",
                System.getProperty("java.class.path"),
                "-d",
                classes.toString(),
                source.toString());
    assertThat(rc).as(errors.toString(StandardCharsets.UTF_8)).isZero();
    var loader =
        new URLClassLoader(
            new URL[] {classes.toUri().toURL()}, PreemptiveWhatIfScriptTest.class.getClassLoader());
    model = loader.loadClass("PreemptiveWhatIf");
  }

  private static String run(String... args) throws Exception {
    var out = new ByteArrayOutputStream();
    PrintStream was = System.out;
    System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
    try {
      model.getMethod("main", String[].class).invoke(null, (Object) args);
    } finally {
      System.setOut(was);
    }
    return out.toString(StandardCharsets.UTF_8).strip();
  }

  /** The figures a line reports: mean bsld, p99 wait, max wait, preemptions. */
  private static List<Double> figures(String line) {
    var m =
        Pattern.compile(
                "mean bsld ([0-9.]+), mean wait [0-9]+ s, p99 wait ([0-9]+) s, max wait ([0-9]+) s,"
                    + " preemptions ([0-9]+)")
            .matcher(line);
    assertThat(m.find()).as(line).isTrue();
    return List.of(
        Double.parseDouble(m.group(1)),
        Double.parseDouble(m.group(2)),
        Double.parseDouble(m.group(3)),
        Double.parseDouble(m.group(4)));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "srpt alpha=0.5 guard=sticky",
        "srpt alpha=0.5 guard=oldest shield=true",
        "factor hysteresis=2 guard=sticky",
        "factor hysteresis=2 guard=oldest shield=true",
        "factor hysteresis=2 guard=all shield=true barrier=true",
        "factor checkpoint=0 protect=600"
      })
  void everyMeasuredVariantKeepsTheModelsInvariant(String variant) throws Exception {
    var args = new ArrayList<>(List.of(WORKLOAD, "64"));
    args.addAll(List.of(variant.split(" ")));
    String line = run(args.toArray(String[]::new));
    assertThat(line).startsWith(variant + ": jobs 300,");
    // The workload keeps 64 GPUs busy enough that every variant preempts.
    assertThat(figures(line).get(3)).as(line).isPositive();
  }

  @Test
  void withoutContentionNothingWaitsAndNothingIsPreempted() throws Exception {
    // A machine as large as all the jobs together (300 x at most 32 GPUs) never makes one wait.
    String line = run(WORKLOAD, "9600", "factor");
    assertThat(figures(line)).containsExactly(1.0, 0.0, 0.0, 0.0);
  }

  @Test
  void preemptionLetsShortJobsPassSoSlowdownFallsBelowEasys() throws Exception {
    double easy = figures(run(WORKLOAD, "64", "easy")).get(0);
    double preemptive = figures(run(WORKLOAD, "64", "srpt")).get(0);
    assertThat(easy).isGreaterThan(1.0);
    assertThat(preemptive).isLessThan(easy);
  }

  @Test
  void sameInputSameOutput() throws Exception {
    assertThat(run(WORKLOAD, "64", "factor", "guard=sticky"))
        .isEqualTo(run(WORKLOAD, "64", "factor", "guard=sticky"));
  }

  @Test
  void anUnknownOptionIsRefusedByName() throws Exception {
    var thrown = catchThrowable(() -> run(WORKLOAD, "64", "factor", "bogus=1"));
    assertThat(thrown).hasRootCauseMessage("unknown key: bogus");
  }
}

package io.kairos.cli;

import static io.kairos.cli.SimulateCommandTest.kairos;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kairos simulate --elastic-share/--checkpoint-cost}: output, reproducibility, bad flags.
 */
class SimulateElasticTest {
  @TempDir Path dir;

  /** {@code n} random jobs of 1 to 32 GPUs, some in whole nodes of 8. */
  private Path trace(int n, long seed) throws IOException {
    var random = new SplittableRandom(seed);
    var sb = new StringBuilder("id,submit_s,gpus,duration_s,time_limit_s,gpus_per_node\n");
    long t = 0;
    for (int i = 1; i <= n; i++) {
      t += random.nextInt(300);
      int perNode = random.nextInt(2) == 0 ? 8 : 0;
      int gpus = perNode > 0 ? 8 * (1 + random.nextInt(4)) : 1 << random.nextInt(5);
      int duration = 1 + random.nextInt(3600);
      sb.append(i)
          .append(',')
          .append(t)
          .append(',')
          .append(gpus)
          .append(',')
          .append(duration)
          .append(',')
          .append(duration + random.nextInt(600))
          .append(',')
          .append(perNode)
          .append('\n');
    }
    var file = dir.resolve("trace.csv");
    Files.writeString(file, sb);
    return file;
  }

  private String[] args(Path trace, Path jobsOut, String... extra) {
    var all = new java.util.ArrayList<String>();
    all.addAll(
        java.util.List.of(
            "simulate",
            "--trace",
            trace.toString(),
            "--cluster",
            "8x8",
            "--policy",
            "fcfs,kairos",
            "--no-timing",
            "--jobs-out",
            jobsOut.toString()));
    all.addAll(java.util.List.of(extra));
    return all.toArray(String[]::new);
  }

  @Test
  void theSameFlagsGiveTheSameOutputToTheByte() throws IOException {
    var file = trace(200, 5);
    String[] flags = {"--elastic-share", "0.6", "--checkpoint-cost", "45s", "--seed", "3"};
    var first = kairos(args(file, dir.resolve("a.csv"), flags)).assertOk();
    var second = kairos(args(file, dir.resolve("b.csv"), flags)).assertOk();

    assertThat(second.out()).isEqualTo(first.out());
    assertThat(Files.readAllBytes(dir.resolve("b.csv")))
        .isEqualTo(Files.readAllBytes(dir.resolve("a.csv")));
    assertThat(first.out())
        .contains("elastic jobs")
        .contains("resizes")
        .contains("migrations")
        .contains("GPU-h lost to resizes");
    var lines = Files.readAllLines(dir.resolve("a.csv"));
    assertThat(lines.getFirst())
        .isEqualTo(
            "policy,id,submit_s,start_s,end_s,wait_s,nodes,"
                + "min_gpus,max_gpus,resizes,migrations,gpu_s,lost_gpu_s");
    assertThat(lines).hasSize(1 + 2 * 200);
    long resized = lines.stream().skip(1).filter(l -> !l.split(",")[9].equals("0")).count();
    assertThat(resized).as("jobs resized").isPositive();
    assertThat(lines.stream().skip(1)).allMatch(l -> l.split(",")[10].equals("0"));
    // Another seed draws other jobs.
    kairos(args(file, dir.resolve("c.csv"), "--elastic-share", "0.6", "--seed", "4")).assertOk();
    assertThat(Files.readAllBytes(dir.resolve("c.csv")))
        .isNotEqualTo(Files.readAllBytes(dir.resolve("a.csv")));
  }

  @Test
  void withoutTheFlagsTheOutputIsAsBefore() throws IOException {
    var file = trace(100, 6);
    var plain = kairos(args(file, dir.resolve("a.csv"))).assertOk();
    var zero =
        kairos(args(file, dir.resolve("b.csv"), "--elastic-share", "0", "--checkpoint-cost", "0"))
            .assertOk();

    assertThat(plain.out()).doesNotContain("resizes").doesNotContain("migrations");
    assertThat(Files.readAllLines(dir.resolve("a.csv")).getFirst())
        .isEqualTo("policy,id,submit_s,start_s,end_s,wait_s,nodes");
    // Share 0 and cost 0 are the model off: the same output to the byte.
    assertThat(zero.out()).isEqualTo(plain.out());
    assertThat(Files.readAllBytes(dir.resolve("b.csv")))
        .isEqualTo(Files.readAllBytes(dir.resolve("a.csv")));
  }

  @Test
  void badFlagsNameTheFlagAndTheFix() throws IOException {
    var file = trace(10, 7);
    var out = dir.resolve("x.csv");
    kairos(args(file, out, "--elastic-share", "1.5"))
        .assertUsageError("--elastic-share", "between 0 and 1");
    kairos(args(file, out, "--elastic-share", "half"))
        .assertUsageError("--elastic-share", "'half'", "0.5");
    kairos(args(file, out, "--elastic-share", "NaN")).assertUsageError("--elastic-share");
    kairos(args(file, out, "--checkpoint-cost", "-5")).assertUsageError("--checkpoint-cost");
    kairos(args(file, out, "--checkpoint-cost", "soon"))
        .assertUsageError("--checkpoint-cost", "90s");
    kairos(args(file, out, "--checkpoint-cost", "30d")).assertUsageError("--checkpoint-cost", "7d");
  }
}

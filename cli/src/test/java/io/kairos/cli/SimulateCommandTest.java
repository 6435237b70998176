package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code kairos simulate} end to end through {@link Main#run}: output formats, and bad input giving
 * exit code 2 with one "kairos:" line and no stack trace.
 */
class SimulateCommandTest {
  @TempDir Path dir;

  private static final ObjectMapper JSON = new ObjectMapper();

  /** What one command printed and returned. */
  record Result(int code, String out, String err) {
    /** Bad input: exit 2, one line on stderr starting "kairos:", no stack trace. */
    Result assertUsageError(String... mentions) {
      assertThat(code).as("exit code; stderr: %s", err).isEqualTo(2);
      assertThat(err).as("stderr").startsWith("kairos: ");
      assertThat(err.strip().lines().count()).as("stderr lines: %s", err).isEqualTo(1);
      assertThat(err).as("stderr").doesNotContain("\tat ").doesNotContain("Exception");
      for (String m : mentions) {
        assertThat(err).as("stderr").contains(m);
      }
      assertThat(out).as("stdout").isEmpty();
      return this;
    }

    Result assertOk() {
      assertThat(code).as("exit code; stderr: %s", err).isZero();
      assertThat(err).as("stderr").isEmpty();
      return this;
    }
  }

  /** Runs {@code kairos args...} with System.out/err captured (Main prints through them). */
  static synchronized Result kairos(String... args) {
    var out = new ByteArrayOutputStream();
    var err = new ByteArrayOutputStream();
    PrintStream oldOut = System.out;
    PrintStream oldErr = System.err;
    int code;
    try {
      System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
      System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
      code = Main.run(args);
    } finally {
      System.out.flush();
      System.err.flush();
      System.setOut(oldOut);
      System.setErr(oldErr);
    }
    return new Result(
        code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  static final String CSV =
      """
      # a small Kairos trace
      id,submit_s,gpus,duration_s,time_limit_s,user,queue,priority,gpus_per_node
      1,0,8,3600,7200,alice,research,0,8
      2,30,1,600,,bob,,,
      3,60,16,1200,1800,carol,prod,1,8
      4,90,4,300,600,dave,,0,
      5,120,32,900,900,erin,,0,8
      6,150,2,100,200,,,,
      """;

  static final String SWF =
      """
      ; Version: 2
      ; MaxNodes: 8
          1      0   -1    100    4   -1   -1    4    200   -1  1  1  1 -1  1 -1 -1 -1
          2     10   -1     50    2   -1   -1    2    100   -1  1  2  1 -1  1 -1 -1 -1
          3     20   -1    300    8   -1   -1    8    400   -1  1  1  1 -1  1 -1 -1 -1
          4     30   -1     20    1   -1   -1    1     60   -1  1  3  1 -1  1 -1 -1 -1
          5     40   -1      0    1   -1   -1    1     60   -1  5  3  1 -1  1 -1 -1 -1
      """;

  private Path write(String name, String content) throws IOException {
    var file = dir.resolve(name);
    Files.writeString(file, content);
    return file;
  }

  private Path csv() throws IOException {
    return write("small.csv", CSV);
  }

  /** {@code n} random jobs, from {@code seed}: big enough for queueing and backfill. */
  private Path randomCsv(int n, long seed) throws IOException {
    var random = new SplittableRandom(seed);
    var sb = new StringBuilder("id,submit_s,gpus,duration_s,time_limit_s,gpus_per_node\n");
    long t = 0;
    for (int i = 1; i <= n; i++) {
      t += random.nextInt(120);
      int perNode = random.nextInt(4) == 0 ? 8 : 0;
      int gpus = perNode > 0 ? 8 * (1 + random.nextInt(4)) : 1 << random.nextInt(5);
      int duration = 1 + random.nextInt(3600);
      int limit = duration + random.nextInt(3600);
      sb.append(i)
          .append(',')
          .append(t)
          .append(',')
          .append(gpus)
          .append(',')
          .append(duration)
          .append(',')
          .append(limit)
          .append(',')
          .append(perNode == 0 ? "" : "8")
          .append('\n');
    }
    return write("random-" + n + "-" + seed + ".csv", sb.toString());
  }

  // ---------------------------------------------------------------- output formats

  @Test
  void tableHasPolicyColumnsAndMetricRows() throws IOException {
    var file = csv();
    var r =
        kairos(
                "simulate",
                "--trace",
                file.toString(),
                "--cluster",
                "4x8",
                "--policy",
                "fcfs,easy,kairos")
            .assertOk();
    var lines = r.out().lines().toList();
    assertThat(lines.get(0)).startsWith("trace    " + file);
    assertThat(lines.get(1)).isEqualTo("cluster  4x8 (32 GPUs)");
    var header = lines.stream().filter(l -> l.contains("fcfs")).findFirst().orElseThrow();
    assertThat(header).containsSubsequence("fcfs", "easy", "kairos");
    for (String row :
        List.of(
            "jobs",
            "skipped (larger than cluster)",
            "makespan (s)",
            "mean wait (s)",
            "p50 wait (s)",
            "p95 wait (s)",
            "p99 wait (s)",
            "max wait (s)",
            "mean JCT (s)",
            "p95 JCT (s)",
            "mean bounded slowdown",
            "utilization",
            "fragmentation (free GPUs)",
            "passes",
            "simulation wall (s)",
            "pass p50 (ms)",
            "pass p99 (ms)")) {
      assertThat(lines).as("row %s", row).anyMatch(l -> l.startsWith(row + " "));
    }
    var jobs = lines.stream().filter(l -> l.startsWith("jobs ")).findFirst().orElseThrow();
    assertThat(jobs.split("\\s+")).containsExactly("jobs", "6", "6", "6");
    // Without --comm-model, the comm rows are left out.
    assertThat(r.out()).doesNotContain("GPU-hours lost to spread");
    // Two jobs have no time limit: noted.
    assertThat(r.out()).contains("note: 1 jobs have no time limit");
  }

  @Test
  void tableWithoutTimingLeavesOutWallClockRows() throws IOException {
    var r =
        kairos("simulate", "--trace", csv().toString(), "--cluster", "4x8", "--no-timing")
            .assertOk();
    assertThat(r.out()).contains("mean wait (s)").contains("kairos");
    assertThat(r.out()).doesNotContain("simulation wall").doesNotContain("pass p50");
  }

  @Test
  void commModelAddsItsRows() throws IOException {
    var r =
        kairos(
                "simulate",
                "--trace",
                csv().toString(),
                "--cluster",
                "4x8",
                "--comm-model",
                "--comm-fraction",
                "0.5",
                "--no-timing")
            .assertOk();
    assertThat(r.out())
        .contains("comm model on")
        .contains("GPU-hours lost to spread")
        .contains("jobs stopped at limit");
  }

  @Test
  void jsonForOnePolicyIsOneObject() throws IOException {
    var r =
        kairos(
                "simulate",
                "--trace",
                csv().toString(),
                "--cluster",
                "4x8",
                "--policy",
                "easy",
                "--json")
            .assertOk();
    JsonNode node = JSON.readTree(r.out());
    assertThat(node.isObject()).isTrue();
    for (String field :
        List.of(
            "policy",
            "trace",
            "cluster",
            "cluster_gpus",
            "jobs",
            "skipped",
            "makespan_s",
            "mean_wait_s",
            "p95_wait_s",
            "mean_jct_s",
            "mean_bounded_slowdown",
            "utilization",
            "fragmentation",
            "passes",
            "comm_model",
            "sim_wall_s",
            "pass_p50_ms",
            "pass_p99_ms",
            "notes")) {
      assertThat(node.has(field)).as("field %s in %s", field, r.out()).isTrue();
    }
    assertThat(node.get("policy").asText()).isEqualTo("easy");
    assertThat(node.get("jobs").asInt()).isEqualTo(6);
    assertThat(node.get("cluster_gpus").asInt()).isEqualTo(32);
    assertThat(node.get("utilization").asDouble()).isBetween(0.0, 1.0);
    assertThat(node.get("mean_bounded_slowdown").asDouble()).isGreaterThanOrEqualTo(1.0);
    assertThat(node.get("sim_wall_s").isNumber()).isTrue();
    assertThat(node.get("notes").isArray()).isTrue();
    // Exactly one JSON value: nothing after it.
    var parser = JSON.createParser(r.out());
    JSON.readTree(parser);
    assertThat(parser.nextToken()).isNull();
  }

  @Test
  void jsonForSeveralPoliciesIsRuns() throws IOException {
    var r =
        kairos(
                "simulate",
                "--trace",
                csv().toString(),
                "--cluster",
                "4x8",
                "--policy",
                "fcfs,easy,conservative,sjf,kairos",
                "--json")
            .assertOk();
    JsonNode node = JSON.readTree(r.out());
    assertThat(node.get("runs").isArray()).isTrue();
    assertThat(node.get("runs")).hasSize(5);
    var names = new ArrayList<String>();
    node.get("runs")
        .forEach(
            run -> {
              names.add(run.get("policy").asText());
              assertThat(run.get("jobs").asInt()).isEqualTo(6);
              assertThat(run.has("sim_wall_s")).isTrue();
            });
    assertThat(names).containsExactly("fcfs", "easy", "conservative", "sjf", "kairos");
    assertThat(node.has("total_wall_s")).isTrue();
  }

  @Test
  void jsonWithoutTimingHasNoWallClockFields() throws IOException {
    var r =
        kairos(
                "simulate",
                "--trace",
                csv().toString(),
                "--cluster",
                "4x8",
                "--policy",
                "easy,sjf",
                "--json",
                "--no-timing")
            .assertOk();
    JsonNode node = JSON.readTree(r.out());
    assertThat(node.has("total_wall_s")).isFalse();
    node.get("runs").forEach(run -> assertThat(run.has("sim_wall_s")).isFalse());
  }

  @Test
  void noTimingOutputIsByteIdenticalAcrossRuns() throws IOException {
    var file = randomCsv(200, 3);
    for (String[] extra :
        List.of(new String[0], new String[] {"--json"}, new String[] {"--markdown"})) {
      var args =
          new ArrayList<>(
              List.of(
                  "simulate",
                  "--trace",
                  file.toString(),
                  "--cluster",
                  "8x8",
                  "--policy",
                  "fcfs,easy,conservative,sjf,kairos",
                  "--no-timing"));
      args.addAll(List.of(extra));
      var a = kairos(args.toArray(String[]::new)).assertOk();
      var b = kairos(args.toArray(String[]::new)).assertOk();
      assertThat(b.out()).isEqualTo(a.out());
      assertThat(a.out()).isNotBlank();
    }
  }

  @Test
  void jobsOutHasAHeaderAndOneRowPerJobPerPolicy() throws IOException {
    var file = randomCsv(50, 11);
    var out = dir.resolve("jobs.csv");
    kairos(
            "simulate",
            "--trace",
            file.toString(),
            "--cluster",
            "8x8",
            "--policy",
            "easy,fcfs",
            "--jobs-out",
            out.toString(),
            "--no-timing")
        .assertOk();
    var lines = Files.readAllLines(out);
    assertThat(lines.getFirst()).isEqualTo("policy,id,submit_s,start_s,end_s,wait_s,nodes");
    assertThat(lines).hasSize(1 + 2 * 50);
    assertThat(lines.subList(1, 51)).allMatch(l -> l.startsWith("easy,"));
    assertThat(lines.subList(51, 101)).allMatch(l -> l.startsWith("fcfs,"));
    for (String line : lines.subList(1, lines.size())) {
      var f = line.split(",", -1);
      assertThat(f).as(line).hasSize(7);
      long submit = Long.parseLong(f[2]);
      long start = Long.parseLong(f[3]);
      long end = Long.parseLong(f[4]);
      assertThat(start).as(line).isGreaterThanOrEqualTo(submit);
      assertThat(end).as(line).isGreaterThan(start);
      assertThat(Long.parseLong(f[5])).as(line).isEqualTo(start - submit);
      assertThat(f[6]).as(line).matches("n\\d( n\\d)*");
    }
  }

  @Test
  void jobsOutOfAHandCheckedCase() throws IOException {
    // One node of 2 GPUs: job 1 (2 GPUs, 0..100), job 2 (1 GPU) waits until 100.
    var file = write("two.csv", "id,submit_s,gpus,duration_s\n1,0,2,100\n2,10,1,5\n");
    var out = dir.resolve("two-jobs.csv");
    kairos(
            "simulate",
            "--trace",
            file.toString(),
            "--cluster",
            "1x2",
            "--policy",
            "fcfs",
            "--jobs-out",
            out.toString())
        .assertOk();
    assertThat(Files.readAllLines(out))
        .containsExactly(
            "policy,id,submit_s,start_s,end_s,wait_s,nodes",
            "fcfs,1,0,0,100,0,n0",
            "fcfs,2,10,100,105,90,n0");
  }

  /**
   * Four one-GPU nodes in two racks (n0 n1, n2 n3). Job 1 takes one GPU; job 2 needs two. Topology
   * placement keeps job 2 inside the rack that still has two free GPUs; first fit takes the next
   * free nodes in order, n1 and n2, across the racks.
   */
  @Test
  void placementStrategyIsChosenAndCheckedByName() throws IOException {
    var file = write("spread.csv", "id,submit_s,gpus,duration_s\n1,0,1,1000\n2,10,2,100\n");
    var topology = dir.resolve("topology-jobs.csv");
    var firstFit = dir.resolve("first-fit-jobs.csv");
    for (var run : List.of(List.of("topology", topology), List.of("first-fit", firstFit))) {
      kairos(
              "simulate",
              "--trace",
              file.toString(),
              "--cluster",
              "4x1",
              "--rack-size",
              "2",
              "--policy",
              "fcfs",
              "--placement",
              run.get(0).toString(),
              "--jobs-out",
              run.get(1).toString(),
              "--no-timing")
          .assertOk();
    }

    assertThat(Files.readAllLines(topology))
        .containsExactly(
            "policy,id,submit_s,start_s,end_s,wait_s,nodes",
            "fcfs,1,0,0,1000,0,n0",
            "fcfs,2,10,10,110,0,n2 n3");
    assertThat(Files.readAllLines(firstFit))
        .containsExactly(
            "policy,id,submit_s,start_s,end_s,wait_s,nodes",
            "fcfs,1,0,0,1000,0,n0",
            "fcfs,2,10,10,110,0,n1 n2");
    kairos("simulate", "--trace", csv().toString(), "--cluster", "4x8", "--placement", "random")
        .assertUsageError("--placement", "random", "topology or first-fit");
  }

  @Test
  void markdownPrintsATable() throws IOException {
    var r =
        kairos(
                "simulate",
                "--trace",
                csv().toString(),
                "--cluster",
                "4x8",
                "--policy",
                "easy,fcfs",
                "--markdown",
                "--no-timing")
            .assertOk();
    var lines = r.out().lines().toList();
    assertThat(lines.get(0)).isEqualTo("| metric | easy | fcfs |");
    assertThat(lines.get(1)).isEqualTo("| --- | --- | --- |");
    assertThat(lines).contains("| jobs | 6 | 6 |");
    var table = lines.subList(2, lines.size()).stream().takeWhile(l -> !l.isEmpty()).toList();
    assertThat(table).allMatch(l -> l.startsWith("| ") && l.endsWith(" |"));
    assertThat(lines.subList(2 + table.size(), lines.size()))
        .allMatch(l -> l.isEmpty() || l.startsWith("Note: "));
    assertThat(lines).anyMatch(l -> l.startsWith("| mean wait (s) | "));
    assertThat(r.out()).doesNotContain("simulation wall").doesNotContain("lost to spread");
  }

  @Test
  void swfAndFlagsRun() throws IOException {
    var file = write("small.swf", SWF);
    var r =
        kairos(
                "simulate",
                "--trace",
                file.toString(),
                "--cluster",
                "8x1",
                "--policy",
                "easy,conservative",
                "--check-invariants",
                "--every-pass",
                "--estimate",
                "actual",
                "--seed",
                "42",
                "--json",
                "--no-timing")
            .assertOk();
    var node = JSON.readTree(r.out());
    node.get("runs")
        .forEach(
            run -> {
              assertThat(run.get("jobs").asInt()).isEqualTo(4); // job 5 has run time 0: dropped
              assertThat(run.get("estimates_from_runtime").asBoolean()).isTrue();
            });
  }

  // ---------------------------------------------------------------- sacct

  /** The sim module's hand-written sacct sample (13 jobs replayed out of 39 lines). */
  private static String sacctSample() throws IOException {
    var file = Path.of("../sim/src/test/resources/sacct/sample.txt");
    assertThat(file).as("sacct sample (run from the cli module)").isRegularFile();
    return Files.readString(file);
  }

  @Test
  void sacctSampleReplaysUnderFcfsAndKairosTheSameEveryTime() throws IOException {
    var file = write("sacct.txt", sacctSample());
    var args =
        new String[] {
          "simulate",
          "--trace",
          file.toString(),
          "--format",
          "sacct",
          "--cluster",
          "4x8",
          "--policy",
          "fcfs,kairos",
          "--json",
          "--no-timing"
        };

    var first = kairos(args).assertOk();
    var again = kairos(args).assertOk();

    assertThat(again.out()).isEqualTo(first.out());
    var runs = JSON.readTree(first.out()).get("runs");
    assertThat(runs).hasSize(2);
    runs.forEach(
        run -> {
          assertThat(run.get("jobs").asInt()).isEqualTo(13);
          assertThat(run.get("skipped").asInt()).isZero();
          assertThat(run.get("notes").toString())
              .contains("20 job steps skipped")
              .contains("1 heterogeneous jobs (2 components) each replayed as one job");
        });
  }

  @Test
  void sacctIsDetectedAndPrintsItsNotes() throws IOException {
    var file = write("sacct.txt", sacctSample());
    var args =
        new String[] {
          "simulate",
          "--trace",
          file.toString(),
          "--cluster",
          "4x8",
          "--policy",
          "fcfs,kairos",
          "--no-timing"
        };

    var r = kairos(args).assertOk();

    assertThat(kairos(args).out()).isEqualTo(r.out());
    assertThat(r.out())
        .contains(
            "note: 3 jobs never started (pending, or cancelled before they" + " started): skipped");
    var jobs = r.out().lines().filter(l -> l.startsWith("jobs ")).findFirst().orElseThrow();
    assertThat(jobs.split("\\s+")).containsExactly("jobs", "13", "13");
  }

  @Test
  void sacctJobsOutKeepsSlurmIds() throws IOException {
    var file = write("sacct.txt", sacctSample());
    var out = dir.resolve("sacct-jobs.csv");
    kairos(
            "simulate",
            "--trace",
            file.toString(),
            "--cluster",
            "4x8",
            "--policy",
            "fcfs",
            "--jobs-out",
            out.toString(),
            "--no-timing")
        .assertOk();
    assertThat(Files.readAllLines(out).stream().skip(1).map(l -> l.split(",")[1]))
        .containsExactly(
            "4100", "4101", "4103", "4104", "4105", "4106", "4108", "4111", "4112", "4113", "4114",
            "4115", "4116");
  }

  @Test
  void malformedSacctValueNamesTheLineAndColumn() throws IOException {
    var file = write("bad-sacct.txt", sacctSample().replace("|UNLIMITED|", "|forever|"));
    kairos("simulate", "--trace", file.toString(), "--format", "sacct", "--cluster", "4x8")
        .assertUsageError(file + ":16: field 'Timelimit'", "forever", "UNLIMITED");
  }

  @Test
  void sacctWithoutARequiredColumnNamesIt() throws IOException {
    var file = write("no-limit.txt", sacctSample().replaceFirst("\\|Timelimit", ""));
    kairos("simulate", "--trace", file.toString(), "--format", "sacct", "--cluster", "4x8")
        .assertUsageError(file + ":1: field 'Timelimit'", "required column is missing");
  }

  @Test
  void gzipTraceIsRead() throws IOException {
    var file = dir.resolve("small.csv.gz");
    try (var gz = new java.util.zip.GZIPOutputStream(Files.newOutputStream(file))) {
      gz.write(CSV.getBytes(StandardCharsets.UTF_8));
    }
    var r =
        kairos(
                "simulate",
                "--trace",
                file.toString(),
                "--cluster",
                "4x8",
                "--json",
                "--policy",
                "fcfs")
            .assertOk();
    assertThat(JSON.readTree(r.out()).get("jobs").asInt()).isEqualTo(6);
  }

  @Test
  void jobsLargerThanTheClusterAreNotedAndSkipped() throws IOException {
    var r =
        kairos(
                "simulate",
                "--trace",
                csv().toString(),
                "--cluster",
                "2x8",
                "--policy",
                "fcfs",
                "--json")
            .assertOk();
    var node = JSON.readTree(r.out());
    assertThat(node.get("skipped").asInt()).isEqualTo(1); // job 5: 32 GPUs
    assertThat(node.get("jobs").asInt()).isEqualTo(5);
    assertThat(node.get("notes").toString()).contains("larger than the cluster");
  }

  @Test
  void yamlClusterRuns() throws IOException {
    var yaml =
        write(
            "cluster.yaml",
            """
        nodes:
          - count: 4
            gpus: 8
            nvlinkDomain: 4
            gpuModel: h100
            gpuMemoryGiB: 80
        topology:
          nodesPerRack: 2
        """);
    var r =
        kairos(
                "simulate",
                "--trace",
                csv().toString(),
                "--cluster",
                yaml.toString(),
                "--policy",
                "easy",
                "--json",
                "--comm-model")
            .assertOk();
    var node = JSON.readTree(r.out());
    assertThat(node.get("cluster").asText()).isEqualTo("cluster.yaml");
    assertThat(node.get("cluster_gpus").asInt()).isEqualTo(32);
    assertThat(node.get("comm_model").asBoolean()).isTrue();
  }

  /**
   * Regression (was a bug): docs/configuration.md gives {@code nodes[].gpuMemoryGiB} a default of
   * 0, and its own example leaves it out of the second group, but ClusterSpecs reads it into a
   * primitive double with FAIL_ON_NULL_FOR_PRIMITIVES on: a missing gpuMemoryGiB is rejected.
   */
  @Test
  void clusterYamlWithoutGpuMemory() throws IOException {
    // The example from docs/configuration.md, verbatim.
    var yaml =
        write(
            "cluster.yaml",
            """
        nodes:
          - count: 32
            gpus: 8
            gpuModel: H100
            gpuMemoryGiB: 80
            nvlinkDomain: 8
            cpus: 96
            memoryGiB: 1024
          - count: 16
            gpus: 8
            gpuModel: A100
            nvlinkDomain: 4
            namePrefix: a
        topology:
          nodesPerRack: 8
          racksPerBlock: 2
          blocksPerZone: 3
        """);
    var r =
        kairos(
                "simulate",
                "--trace",
                csv().toString(),
                "--cluster",
                yaml.toString(),
                "--policy",
                "easy",
                "--json")
            .assertOk();
    assertThat(JSON.readTree(r.out()).get("cluster_gpus").asInt()).isEqualTo(384);
  }

  // ---------------------------------------------------------------- bad input

  @Test
  void badTenancyFileListsEveryProblemWithoutAStackTrace() throws IOException {
    Path csv = dir.resolve("t.csv");
    Files.writeString(csv, "id,submit_s,gpus,duration_s,queue\n1,0,8,100,a\n");
    Path yaml = dir.resolve("tenancy.yaml");
    Files.writeString(
        yaml,
        "queues:\n  - {name: a, quota: {gpu:gpu: {nominal: 4}}}\n"
            + "scheduling: {preemptionGrace: soon}\n");

    Result r =
        kairos(
            "simulate",
            "--trace",
            csv.toString(),
            "--cluster",
            "2x4",
            "--tenancy",
            yaml.toString());

    assertThat(r.code()).as("exit code; stderr: %s", r.err()).isEqualTo(2);
    assertThat(r.out()).isEmpty();
    assertThat(r.err()).startsWith("kairos: --tenancy: 3 problem(s) in " + yaml);
    assertThat(r.err())
        .contains(yaml + ": queues[a].quota: unknown key; did you mean 'quotas'?")
        .contains(yaml + ": queues[a].quotas: missing")
        .contains(yaml + ": scheduling.preemptionGrace: not a duration: 'soon'")
        .doesNotContain("\tat ")
        .doesNotContain("Exception");
  }

  @Test
  void tenancyRunsReportPerQueueFiguresForEveryPolicy() throws IOException {
    Path csv = dir.resolve("t.csv");
    Files.writeString(csv, "id,submit_s,gpus,duration_s,queue\n1,0,8,10000,a\n2,100,4,100,b\n");
    Path yaml = dir.resolve("tenancy.yaml");
    Files.writeString(
        yaml,
        """
        cohorts: [c]
        queues:
          - {name: a, cohort: c, quotas: {gpu:gpu: {nominal: 4}}}
          - {name: b, cohort: c, quotas: {gpu:gpu: {nominal: 4}}, preemption: {reclaimWithinCohort: ANY}}
        """);

    Result r =
        kairos(
                "simulate",
                "--trace",
                csv.toString(),
                "--cluster",
                "2x4",
                "--policy",
                "kairos,fcfs",
                "--tenancy",
                yaml.toString(),
                "--checkpoint-every",
                "1m",
                "--json",
                "--no-timing")
            .assertOk();

    JsonNode runs = JSON.readTree(r.out()).get("runs");
    JsonNode kairos = runs.get(0).get("tenancy");
    JsonNode fcfs = runs.get(1).get("tenancy");
    assertThat(kairos.get("scheduled").asBoolean()).isTrue();
    assertThat(kairos.get("requeued").asInt()).isEqualTo(1);
    assertThat(kairos.get("checkpoint_every_s").asLong()).isEqualTo(60);
    // 130 s run, checkpoint at 120: 10 s x 8 GPUs lost.
    assertThat(kairos.get("preemption_gpu_hours_lost").asDouble()).isEqualTo(0.022);
    assertThat(fcfs.get("scheduled").asBoolean()).isFalse();
    assertThat(fcfs.get("preemptions").asInt()).isZero();
    assertThat(fcfs.get("queues").get(1).get("mean_wait_s").asDouble()).isEqualTo(9900.0);
    assertThat(kairos.get("queues").get(1).get("mean_wait_s").asDouble()).isEqualTo(30.0);
  }

  /** Alice and bob share queue a, each charged to their own account; carol is alone in b. */
  private Path[] sharedQueue() throws IOException {
    Path csv = dir.resolve("shared.csv");
    Files.writeString(
        csv,
        "id,submit_s,gpus,duration_s,user,queue\n1,0,4,100,alice,a\n2,0,2,50,bob,a\n"
            + "3,10,2,30,alice,a\n4,20,1,10,carol,b\n");
    Path yaml = dir.resolve("shared.yaml");
    Files.writeString(
        yaml,
        """
        queues:
          - {name: a, quotas: {gpu:gpu: {nominal: 3}}}
          - {name: b, quotas: {gpu:gpu: {nominal: 1}}}
        """);
    return new Path[] {csv, yaml};
  }

  @Test
  void tenancyRunsReportPerAccountFiguresAndTablesWhenAccountsAreNotQueues() throws IOException {
    Path[] files = sharedQueue();
    String[] args = {
      "simulate",
      "--trace",
      files[0].toString(),
      "--cluster",
      "1x4",
      "--policy",
      "fcfs,kairos",
      "--tenancy",
      files[1].toString(),
      "--no-timing"
    };

    Result json = kairos(concat(args, "--json")).assertOk();
    Result markdown = kairos(concat(args, "--markdown")).assertOk();
    Result text = kairos(args).assertOk();

    JsonNode fcfs = JSON.readTree(json.out()).get("runs").get(0).get("tenancy");
    assertThat(fcfs.get("accounts").findValuesAsText("account"))
        .containsExactly("alice", "bob", "carol");
    JsonNode alice = fcfs.get("accounts").get(0);
    assertThat(alice.get("jobs").asInt()).isEqualTo(2);
    assertThat(alice.get("mean_wait_s").asDouble()).isEqualTo(45.0);
    assertThat(alice.get("p99_wait_s").asLong()).isEqualTo(90);
    assertThat(alice.get("mean_jct_s").asDouble()).isEqualTo(110.0);
    assertThat(alice.get("fair_share_factor").isNull()).as("fcfs only measured").isTrue();
    JsonNode kairos = JSON.readTree(json.out()).get("runs").get(1).get("tenancy");
    assertThat(kairos.get("accounts").get(0).get("fair_share_factor").asDouble())
        .isBetween(0.0, 1.0);
    assertThat(markdown.out())
        .contains("Accounts under fcfs:", "Accounts under kairos:")
        .contains("| account | queues | jobs | GPU-h |")
        .contains("| alice | a | 2 | 0.128 | 45.000 | 90 | 110.000 | 0 | 0.000 | - |");
    assertThat(text.out()).contains("accounts under fcfs", "accounts under kairos");
  }

  @Test
  void accountTablesAreLeftOutWhenEachAccountIsItsQueue() throws IOException {
    Path[] files = sharedQueue();
    Files.writeString(
        files[1],
        """
        queues:
          - {name: a, quotas: {gpu:gpu: {nominal: 3}}, defaults: {account: a}}
          - {name: b, quotas: {gpu:gpu: {nominal: 1}}, defaults: {account: b}}
        accounts: [{name: a}, {name: b}]
        """);

    Result r =
        kairos(
                "simulate",
                "--trace",
                files[0].toString(),
                "--cluster",
                "1x4",
                "--policy",
                "fcfs",
                "--tenancy",
                files[1].toString(),
                "--markdown",
                "--no-timing")
            .assertOk();

    assertThat(r.out()).contains("Queues under fcfs").doesNotContain("Accounts under");
  }

  @Test
  void chartsUnderATenancyIncludeUsageAgainstQuotaPerPolicy() throws IOException {
    Path[] files = sharedQueue();
    Path charts = dir.resolve("charts");
    Path html = dir.resolve("report.html");

    kairos(
            "simulate",
            "--trace",
            files[0].toString(),
            "--cluster",
            "1x4",
            "--policy",
            "fcfs,kairos",
            "--tenancy",
            files[1].toString(),
            "--charts",
            charts.toString(),
            "--report",
            html.toString(),
            "--no-timing")
        .assertOk();

    assertThat(charts.resolve("quota-fcfs.svg")).exists();
    assertThat(charts.resolve("quota-kairos.svg")).exists();
    String svg = Files.readString(charts.resolve("quota-kairos.svg"));
    assertThat(svg.split("class=\"quota-panel\"", -1)).hasSize(3);
    assertThat(Files.readString(html))
        .contains("GPUs held against nominal quota, per queue: kairos");
  }

  private static String[] concat(String[] args, String more) {
    var all = java.util.Arrays.copyOf(args, args.length + 1);
    all[args.length] = more;
    return all;
  }

  @Test
  void badCheckpointIntervalIsAUsageError() throws IOException {
    Path csv = dir.resolve("t.csv");
    Files.writeString(csv, "id,submit_s,gpus,duration_s\n1,0,1,100\n");
    kairos("simulate", "--trace", csv.toString(), "--cluster", "1x4", "--checkpoint-every", "often")
        .assertUsageError("--checkpoint-every", "often");
  }

  @Test
  void unknownPolicyListsTheValidOnes() throws IOException {
    kairos("simulate", "--trace", csv().toString(), "--cluster", "4x8", "--policy", "easy,bogus")
        .assertUsageError("bogus", "fcfs, easy, conservative, sjf, kairos");
  }

  static Stream<Arguments> badClusters() {
    return Stream.of(
        Arguments.of("0x8", "node count"),
        Arguments.of("10x65", "GPUs per node"),
        Arguments.of("10x0", "GPUs per node"),
        Arguments.of("nonsense", "nonsense"),
        Arguments.of("99999999999x8", "too large"),
        Arguments.of("2000000x8", "node count"));
  }

  @ParameterizedTest(name = "--cluster {0}")
  @MethodSource("badClusters")
  void impossibleClusters(String spec, String mention) throws IOException {
    kairos("simulate", "--trace", csv().toString(), "--cluster", spec)
        .assertUsageError("--cluster", mention);
  }

  @Test
  void generateOrTraceButNotBothNorNeither() throws IOException {
    kairos("simulate", "--cluster", "4x8").assertUsageError("--trace", "--generate");
    kairos("simulate", "--trace", csv().toString(), "--generate", "jobs=10", "--cluster", "4x8")
        .assertUsageError("--trace", "--generate");
    kairos("simulate", "--generate", "jobs=10,colour=red", "--cluster", "4x8")
        .assertUsageError("--generate", "unknown key 'colour'");
  }

  /** A generated workload with predictions: the forecast's and the baseline's rows, per policy. */
  @Test
  void generatedWorkloadWithPredictions() {
    var r =
        kairos(
                "simulate",
                "--generate",
                "jobs=300,load=1.5,max-gpus=16,seed=3",
                "--cluster",
                "4x8",
                "--policy",
                "easy,kairos",
                "--predictions",
                "--markdown",
                "--no-timing")
            .assertOk();
    assertThat(r.out())
        .contains("| metric | easy | kairos |")
        .contains("| start predictions scored |")
        .contains("| naive within 1 h |")
        .contains("generated workload: 300 jobs");
  }

  @Test
  void badRackSize() throws IOException {
    kairos("simulate", "--trace", csv().toString(), "--cluster", "4x8", "--rack-size", "0")
        .assertUsageError("--rack-size");
  }

  @Test
  void missingTraceFile() {
    var missing = dir.resolve("nope.swf").toString();
    kairos("simulate", "--trace", missing, "--cluster", "4x8")
        .assertUsageError(missing, "no such file");
  }

  @Test
  void traceIsADirectory() {
    kairos("simulate", "--trace", dir.toString(), "--cluster", "4x8")
        .assertUsageError(dir.toString(), "directory");
  }

  @Test
  void malformedSwfLineNamesTheLineAndField() throws IOException {
    var file =
        write("bad.swf", SWF.replace("    2     10   -1     50", "    2     10   -1    5x0"));
    kairos("simulate", "--trace", file.toString(), "--cluster", "8x1")
        .assertUsageError(file + ":4:", "run time (field 4)", "5x0");
  }

  @Test
  void malformedCsvLineNamesTheLineAndColumn() throws IOException {
    var file = write("bad.csv", CSV.replace("4,90,4,300", "4,90,four,300"));
    kairos("simulate", "--trace", file.toString(), "--cluster", "4x8")
        .assertUsageError(file + ":6:", "'gpus'", "four");
  }

  @Test
  void unknownFormat() throws IOException {
    kairos("simulate", "--trace", csv().toString(), "--cluster", "4x8", "--format", "parquet")
        .assertUsageError("--format", "parquet");
  }

  @Test
  void wrongFormatForTheFile() throws IOException {
    kairos("simulate", "--trace", csv().toString(), "--cluster", "4x8", "--format", "swf")
        .assertUsageError("small.csv:1:", "job id (field 1)");
  }

  @Test
  void undetectableFormat() throws IOException {
    var file = write("what.txt", "hello world\n");
    kairos("simulate", "--trace", file.toString(), "--cluster", "4x8").assertUsageError("--format");
  }

  @Test
  void bogusEstimate() throws IOException {
    kairos("simulate", "--trace", csv().toString(), "--cluster", "4x8", "--estimate", "bogus")
        .assertUsageError("--estimate", "bogus");
  }

  @ParameterizedTest
  @ValueSource(strings = {"2", "-0.1", "1.0001"})
  void commFractionOutOfRange(String fraction) throws IOException {
    kairos(
            "simulate",
            "--trace",
            csv().toString(),
            "--cluster",
            "4x8",
            "--comm-model",
            "--comm-fraction",
            fraction)
        .assertUsageError("--comm-fraction", "between 0 and 1");
    // Checked even without --comm-model.
    kairos("simulate", "--trace", csv().toString(), "--cluster", "4x8", "--comm-fraction", fraction)
        .assertUsageError("--comm-fraction");
  }

  @Test
  void jsonAndMarkdownTogether() throws IOException {
    kairos("simulate", "--trace", csv().toString(), "--cluster", "4x8", "--json", "--markdown")
        .assertUsageError("--json", "--markdown");
  }

  @Test
  void jobsOutInAMissingDirectory() throws IOException {
    var out = dir.resolve("no/such/dir/jobs.csv");
    var r =
        kairos(
            "simulate",
            "--trace",
            csv().toString(),
            "--cluster",
            "4x8",
            "--jobs-out",
            out.toString());
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).startsWith("kairos: --jobs-out").doesNotContain("\tat ");
  }

  /**
   * Bad cluster files. Each group sets gpuMemoryGiB, which should be optional (default 0) but is
   * required today: see {@link #clusterYamlWithoutGpuMemory()}.
   */
  static Stream<Arguments> badYaml() {
    String group = "nodes:\n  - count: 2\n    gpus: 8\n    gpuMemoryGiB: 80\n";
    return Stream.of(
        Arguments.of("unknown field", group + "    colour: red\n", "nodes[0].colour"),
        Arguments.of(
            "wrong type",
            "nodes:\n  - count: 2\n    gpus: eight\n    gpuMemoryGiB: 80\n",
            "nodes[0].gpus"),
        Arguments.of(
            "wrong type of a string field", group + "    labels: [a, b]\n", "nodes[0].labels"),
        Arguments.of(
            "nvlink does not divide", group + "    nvlinkDomain: 3\n", "nodes[0].nvlinkDomain"),
        Arguments.of("nvlink zero", group + "    nvlinkDomain: 0\n", "nodes[0].nvlinkDomain"),
        Arguments.of("empty nodes", "nodes: []\n", "'nodes'"),
        Arguments.of("missing nodes", "topology:\n  nodesPerRack: 4\n", "nodes"),
        Arguments.of("missing count", "nodes:\n  - gpus: 8\n    gpuMemoryGiB: 80\n", "count"),
        Arguments.of(
            "zero count",
            "nodes:\n  - count: 0\n    gpus: 8\n    gpuMemoryGiB: 80\n",
            "nodes[0].count"),
        Arguments.of(
            "too many gpus",
            "nodes:\n  - count: 1\n    gpus: 65\n    gpuMemoryGiB: 80\n",
            "nodes[0].gpus"),
        Arguments.of(
            "bad topology", group + "topology:\n  nodesPerRack: 0\n", "topology.nodesPerRack"),
        Arguments.of("unknown top-level", group + "racks: 3\n", "racks"),
        Arguments.of("not yaml", "nodes: [\n", "cluster.yaml"),
        Arguments.of("scalar", "42\n", "cluster.yaml"),
        Arguments.of("empty file", "", "cluster.yaml"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badYaml")
  void badClusterYaml(String what, String yaml, String mention) throws IOException {
    var file = write("cluster.yaml", yaml);
    kairos("simulate", "--trace", csv().toString(), "--cluster", file.toString())
        .assertUsageError("cluster.yaml", mention);
  }

  @Test
  void missingRequiredOptionIsAUsageError() throws IOException {
    var r = kairos("simulate", "--trace", csv().toString());
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).contains("--cluster").doesNotContain("\tat ");
    var none = kairos("simulate");
    assertThat(none.code()).isEqualTo(2);
    assertThat(none.err()).contains("Missing required option").doesNotContain("\tat ");
  }

  @Test
  void unknownOptionIsAUsageError() throws IOException {
    var r = kairos("simulate", "--trace", csv().toString(), "--cluster", "4x8", "--frobnicate");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).contains("--frobnicate").doesNotContain("\tat ");
  }

  @Test
  void helpExitsZero() {
    var r = kairos("simulate", "--help");
    assertThat(r.code()).isZero();
    assertThat(r.out()).contains("--trace").contains("--cluster").contains("--policy");
  }

  // ---------------------------------------------------------------- regressions

  /**
   * Regression (was a bug): the --format message lists "auto" twice (TraceReaders.FORMATS already
   * holds it).
   */
  @Test
  void unknownFormatListsEachFormatOnce() throws IOException {
    kairos("simulate", "--trace", csv().toString(), "--cluster", "4x8", "--format", "parquet")
        .assertUsageError("use auto, swf, philly, kairos-csv");
  }

  /**
   * Regression (was a bug): {@code commFraction < 0 || commFraction > 1} lets NaN through: without
   * --comm-model it is accepted silently (exit 0), with it the message comes from CommModel and
   * does not name the option ("kairos: comm fraction must be in [0, 1], got NaN").
   */
  @Test
  void commFractionNaN() throws IOException {
    kairos("simulate", "--trace", csv().toString(), "--cluster", "4x8", "--comm-fraction", "NaN")
        .assertUsageError("--comm-fraction");
    kairos(
            "simulate",
            "--trace",
            csv().toString(),
            "--cluster",
            "4x8",
            "--comm-model",
            "--comm-fraction",
            "NaN")
        .assertUsageError("--comm-fraction");
  }

  /**
   * Regression (was a bug): docs/simulator.md says jobs larger than the cluster are noted and
   * skipped, but a job of more than 2^20 GPUs (or gpus_per_node > 64) makes GangSpec throw: exit 2
   * with "kairos: gang.tasks must be between 1 and 1048576, got 2000000", naming neither file nor
   * line.
   */
  @Test
  void absurdlyWideJobIsSkipped() throws IOException {
    var file = write("wide.csv", "id,submit_s,gpus,duration_s\n1,0,2000000,10\n2,0,1,10\n");
    var r =
        kairos(
                "simulate",
                "--trace",
                file.toString(),
                "--cluster",
                "4x8",
                "--json",
                "--policy",
                "easy")
            .assertOk();
    var node = JSON.readTree(r.out());
    assertThat(node.get("skipped").asInt()).isEqualTo(1);
    assertThat(node.get("jobs").asInt()).isEqualTo(1);
  }

  /**
   * Regression (was a bug): submit_s + duration_s past Long.MAX_VALUE overflows: the end time goes
   * negative, the completion is applied "at once", and on a 2-GPU node two 2-GPU jobs run at the
   * same time. Actual: exit 0, --jobs-out rows "fcfs,1,9223372036854775800,9223372036854775800,
   * -9223372036854775806,0,n0" and "fcfs,2,9223372036854775801,9223372036854775801,...", and
   * makespan_s 0, utilization 0. Expected: the input rejected with exit 2 naming the file.
   */
  @Test
  void timesThatOverflowAreRejected() throws IOException {
    var file =
        write(
            "late.csv",
            "id,submit_s,gpus,duration_s\n"
                + "1,9223372036854775800,2,10\n2,9223372036854775801,2,10\n");
    kairos("simulate", "--trace", file.toString(), "--cluster", "1x2", "--policy", "fcfs")
        .assertUsageError("late.csv");
  }

  // ---------------------------------------------------------------- fuzz

  private static final String[] JUNK = {
    ",",
    ",,,",
    "\n",
    "\r\n",
    "-",
    "-1",
    "0",
    " ",
    "\t",
    ";",
    "#",
    "x",
    "1e308",
    "1e-9",
    "NaN",
    "Infinity",
    "0x1F",
    "99999999999999999999",
    "9223372036854775807",
    "-9223372036854775808",
    "2147483647",
    "4294967296",
    "1.5",
    "\u00e9",
    "\u0000",
    "\"",
    "id,submit_s",
    "timestamp",
  };

  private static final String[] HUGE = {
    "9223372036854775807",
    "4611686018427387904",
    "9223372036854775806",
    "2147483647",
    "2147483648",
    "1048577",
    "99999999999999999999",
    "1e18",
    "4.6e18",
    "65",
    "1000000",
  };

  /** One random mutation of {@code text}. */
  private static byte[] mutate(String text, SplittableRandom random) {
    var bytes = new ArrayList<Byte>();
    for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
      bytes.add(b);
    }
    int edits = 1 + random.nextInt(3);
    for (int e = 0; e < edits && !bytes.isEmpty(); e++) {
      switch (random.nextInt(5)) {
        case 0 -> { // flip a byte
          int at = random.nextInt(bytes.size());
          bytes.set(at, (byte) random.nextInt(256));
        }
        case 1 -> { // truncate
          int at = random.nextInt(bytes.size());
          bytes.subList(at, bytes.size()).clear();
        }
        case 2 -> { // insert junk
          int at = random.nextInt(bytes.size() + 1);
          var junk = JUNK[random.nextInt(JUNK.length)].getBytes(StandardCharsets.UTF_8);
          for (int k = junk.length - 1; k >= 0; k--) {
            bytes.add(at, junk[k]);
          }
        }
        case 3 -> { // replace a number with a huge one
          var s = new String(toArray(bytes), StandardCharsets.UTF_8);
          var m = java.util.regex.Pattern.compile("\\d+").matcher(s);
          var spans = new ArrayList<int[]>();
          while (m.find()) {
            spans.add(new int[] {m.start(), m.end()});
          }
          if (!spans.isEmpty()) {
            var span = spans.get(random.nextInt(spans.size()));
            s = s.substring(0, span[0]) + HUGE[random.nextInt(HUGE.length)] + s.substring(span[1]);
            bytes.clear();
            for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
              bytes.add(b);
            }
          }
        }
        default -> { // delete a byte
          bytes.remove(random.nextInt(bytes.size()));
        }
      }
    }
    return toArray(bytes);
  }

  private static byte[] toArray(List<Byte> bytes) {
    var out = new byte[bytes.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = bytes.get(i);
    }
    return out;
  }

  static Stream<Arguments> fuzzCases() {
    return Stream.of(Arguments.of("csv"), Arguments.of("swf"), Arguments.of("sacct"));
  }

  /**
   * 300 seeded random mutations of a small valid CSV, SWF and sacct file (100 each): every run
   * exits 0 or 2, and never prints a stack trace. Failures name the seed, and the file that broke.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("fuzzCases")
  void mutatedTracesExitZeroOrTwoWithoutStackTraces(String kind) throws IOException {
    String base =
        switch (kind) {
          case "csv" -> CSV;
          case "swf" -> SWF;
          default -> sacctSample();
        };
    String cluster = kind.equals("swf") ? "8x1" : "4x8";
    var failures = new ArrayList<String>();
    int[] byCode = new int[3];
    for (int seed = 0; seed < 100; seed++) {
      var random = new SplittableRandom(seed * 31L + kind.hashCode());
      var bytes = mutate(base, random);
      var file = dir.resolve(kind + "-" + seed + "." + kind);
      Files.write(file, bytes);
      var r =
          kairos(
              "simulate",
              "--trace",
              file.toString(),
              "--cluster",
              cluster,
              "--policy",
              "easy,kairos",
              "--check-invariants",
              "--no-timing");
      boolean ok =
          (r.code() == 0 && r.err().isEmpty())
              || (r.code() == 2
                  && r.err().startsWith("kairos: ")
                  && r.err().strip().lines().count() == 1
                  && !r.err().contains("\tat "));
      if (ok) {
        byCode[r.code()]++;
      }
      if (!ok) {
        failures.add(
            "seed "
                + seed
                + " exit "
                + r.code()
                + "\n--- input:\n"
                + new String(bytes, StandardCharsets.UTF_8)
                + "\n--- stderr:\n"
                + r.err().lines().limit(4).reduce("", (a, b) -> a + b + "\n"));
      } else {
        Files.delete(file);
      }
    }
    assertThat(failures).as(String.join("\n=====\n", failures)).isEmpty();
    // Both outcomes occur: the mutations neither all break the file nor all leave it valid.
    assertThat(byCode[0]).as("runs that exited 0").isPositive();
    assertThat(byCode[2]).as("runs that exited 2").isPositive();
  }
}

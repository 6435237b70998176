package io.kairos.cli;

import io.kairos.cli.ckpt.CheckpointStore;
import io.kairos.cli.ckpt.CheckpointWriter;
import io.kairos.cli.ckpt.Manifests;
import io.kairos.cli.ckpt.S3Store;
import io.kairos.protocol.CheckpointLocation;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code kairos bench checkpoint}: checkpoint write and read throughput to a directory or an S3
 * location, by the protocol the jobs use (every rank's shard at once, then the manifest, last; the
 * read is the restore: the newest complete manifest, then every shard). No server.
 */
@Command(
    name = "checkpoint",
    mixinStandardHelpOptions = true,
    description = {
      "Checkpoint throughput to a directory or to S3-compatible object storage: each run writes"
          + " one checkpoint of --ranks shards (at once, then the manifest) and reads it back as"
          + " a restore does. Prints MiB/s, median and spread; deletes what it wrote."
    })
final class BenchCheckpointCommand implements Callable<Integer> {
  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Option(
      names = "--location",
      required = true,
      paramLabel = "DIR|s3://BUCKET/PREFIX",
      description = "Where to write (a directory, or an S3 location).")
  String location;

  @Option(
      names = "--s3-endpoint",
      paramLabel = "URL",
      description =
          "An S3-compatible endpoint (default KAIROS_S3_ENDPOINT, AWS_ENDPOINT_URL, AWS).")
  String s3Endpoint;

  @Option(
      names = "--create-bucket",
      description = "Create the S3 bucket first (a fresh test server).")
  boolean createBucket;

  @Option(
      names = "--mib",
      paramLabel = "N[,N...]",
      defaultValue = "64,256",
      split = ",",
      description = "Checkpoint sizes in MiB, all ranks together (default ${DEFAULT-VALUE}).")
  List<Integer> mib;

  @Option(
      names = "--ranks",
      paramLabel = "N",
      defaultValue = "4",
      description = "Shards per checkpoint, written at once (default ${DEFAULT-VALUE}).")
  int ranks;

  @Option(
      names = "--runs",
      paramLabel = "N",
      defaultValue = "5",
      description = "Checkpoints per size (default ${DEFAULT-VALUE}).")
  int runs;

  @Override
  public Integer call() throws IOException, InterruptedException {
    String problem = CheckpointLocation.problem(location);
    if (problem != null || location.isEmpty()) {
      throw new UsageException(
          "--location "
              + (problem == null ? "must not be empty" : problem)
              + ", got '"
              + location
              + "'");
    }
    if (ranks < 1 || ranks > 1024 || runs < 1 || mib.stream().anyMatch(m -> m < 1 || m > 65536)) {
      throw new UsageException("--ranks 1..1024, --runs >= 1, --mib 1..65536 each");
    }
    PrintWriter out = spec.commandLine().getOut();
    var settings = S3Store.Settings.fromEnvironment(System.getenv(), s3Endpoint);
    try (CheckpointStore store = CheckpointStore.open(location, settings)) {
      if (createBucket && store instanceof S3Store s3) {
        s3.createBucket();
      }
      out.printf(
          Locale.ROOT, "checkpoints to %s: %d shards each, %d runs%n", store.url(), ranks, runs);
      out.printf(
          Locale.ROOT,
          "%8s %10s %22s %22s%n",
          "MIB",
          "RANKS",
          "WRITE MiB/s med (min-max)",
          "READ MiB/s med (min-max)");
      var random = new Random(42);
      long step = 1;
      for (int size : mib) {
        List<byte[]> shards = shards(size, random);
        double[] writes = new double[runs];
        double[] reads = new double[runs];
        for (int run = 0; run < runs; run++, step++) {
          long t0 = System.nanoTime();
          long bytes = CheckpointWriter.write(store, step, shards);
          writes[run] = mibPerSec(bytes, System.nanoTime() - t0);
          t0 = System.nanoTime();
          long read = restore(store, step);
          reads[run] = mibPerSec(read, System.nanoTime() - t0);
          store.deleteStep(CheckpointWriter.stepName(step));
        }
        out.printf(Locale.ROOT, "%8d %10d %22s %22s%n", size, ranks, spread(writes), spread(reads));
        out.flush();
      }
    }
    return 0;
  }

  private List<byte[]> shards(int size, Random random) {
    long total = (long) size << 20;
    List<byte[]> shards = new ArrayList<>();
    for (int r = 0; r < ranks; r++) {
      byte[] data = new byte[(int) (total / ranks)];
      random.nextBytes(data);
      shards.add(data);
    }
    return shards;
  }

  /** A restore: the newest complete manifest, then every shard it names. */
  private static long restore(CheckpointStore store, long step) throws IOException {
    var newest = Manifests.newest(store);
    if (newest.isEmpty() || newest.get().step() != step) {
      throw new IOException("step " + step + " was written but is not the newest complete one");
    }
    long bytes = 0;
    for (String name : store.names(newest.get().name())) {
      bytes += store.get(newest.get().name() + "/" + name).orElseThrow().length;
    }
    return bytes;
  }

  private static double mibPerSec(long bytes, long nanos) {
    return bytes / 1048576.0 / (nanos / 1e9);
  }

  private static String spread(double[] values) {
    double[] v = values.clone();
    java.util.Arrays.sort(v);
    double median =
        v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    return String.format(Locale.ROOT, "%.1f (%.1f-%.1f)", median, v[0], v[v.length - 1]);
  }
}

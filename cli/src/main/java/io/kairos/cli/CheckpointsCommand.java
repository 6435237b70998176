package io.kairos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.cli.ckpt.CheckpointStore;
import io.kairos.cli.ckpt.Manifests;
import io.kairos.cli.ckpt.S3Store;
import io.kairos.protocol.CheckpointList;
import io.kairos.protocol.CheckpointView;
import io.kairos.protocol.JobView;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code kairos checkpoints ID}: a checkpointing job's complete checkpoints, newest last. */
@Command(
    name = "checkpoints",
    mixinStandardHelpOptions = true,
    description = {
      "List a job's complete checkpoints as Kairos recorded them (step, when, size, manifest),"
          + " oldest first: the last is the one the job's next attempt restores.",
      "With --storage, read the job's checkpoint location itself (its directory, or s3://bucket/"
          + "prefix with your own AWS credentials) and show every step there: complete, incomplete"
          + " (no manifest, or a shard missing or of another size) or refused (a manifest naming"
          + " a path outside the location), and whether Kairos recorded it.",
      ""
    })
final class CheckpointsCommand extends ApiCommand {
  @Parameters(paramLabel = "ID", description = "The job id.")
  long id;

  @Option(
      names = "--storage",
      description = "Read the checkpoint location itself, not only Kairos' records.")
  boolean storage;

  @Option(
      names = "--location",
      paramLabel = "DIR|s3://BUCKET/PREFIX",
      description = "With --storage: read this location instead of the job's checkpointDir.")
  String location;

  @Option(
      names = "--s3-endpoint",
      paramLabel = "URL",
      description =
          "With --storage on s3://: the S3-compatible endpoint (default KAIROS_S3_ENDPOINT,"
              + " AWS_ENDPOINT_URL, else AWS).")
  String s3Endpoint;

  @Override
  int run(ApiClient api, PrintWriter out) {
    JsonNode reply = api.get("/api/v1/jobs/" + id + "/checkpoints");
    if (storage || location != null) {
      return storage(api, Json.convert(reply, CheckpointList.class), out);
    }
    if (isJson()) {
      Json.print(out, reply);
      return 0;
    }
    CheckpointList list = Json.convert(reply, CheckpointList.class);
    if (list.signal() == null) {
      out.println("job " + id + " does not declare checkpoints");
      out.flush();
      return 0;
    }
    out.printf(
        "job %d: checkpoint on SIG%s (timeout %ds), every %s, keeps %d%n",
        id,
        list.signal(),
        list.timeoutSec(),
        list.everySec() == 0 ? "time it is asked" : list.everySec() + "s",
        list.keep());
    var table = new Table("STEP", "ATTEMPT", "RECORDED", "SIZE", "FILES", "MANIFEST");
    for (CheckpointView c : list.checkpoints()) {
      table.row(
          c.step(),
          c.attempt(),
          TimeFormat.full(c.time(), Environment.zone),
          size(c.sizeBytes()),
          c.files(),
          c.manifest());
    }
    table.print(out);
    return 0;
  }

  private int storage(ApiClient api, CheckpointList recorded, PrintWriter out) {
    String where = location;
    if (where == null) {
      JobView job = Json.convert(api.get("/api/v1/jobs/" + id), JobView.class);
      where = job.checkpointDir();
      if (where == null) {
        throw new UsageException(
            "job "
                + id
                + " gave no checkpointDir: its checkpoints are in each node's agent directory"
                + " (<agent data>/checkpoints/"
                + id
                + "); read one with --location DIR");
      }
    }
    String problem = io.kairos.protocol.CheckpointLocation.problem(where);
    if (problem != null) {
      throw new UsageException("--location " + problem + ", got '" + where + "'");
    }
    Set<Long> known = new HashSet<>();
    for (CheckpointView c :
        recorded.checkpoints() == null ? List.<CheckpointView>of() : recorded.checkpoints()) {
      known.add(c.step());
    }
    List<Manifests.Found> found;
    String url;
    try (CheckpointStore store =
        CheckpointStore.open(
            where, S3Store.Settings.fromEnvironment(System.getenv(), s3Endpoint))) {
      url = store.url();
      found = Manifests.scan(store);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    out.println("job " + id + ": " + url);
    var table = new Table("STEP", "STATUS", "SHARDS", "SIZE", "RECORDED", "WHY");
    for (Manifests.Found f : found) {
      table.row(
          f.step(),
          f.status().name().toLowerCase(java.util.Locale.ROOT),
          f.shards(),
          f.status() == Manifests.Status.COMPLETE ? size(f.bytes()) : "-",
          known.contains(f.step()) ? "yes" : "no",
          f.reason());
    }
    table.print(out);
    return 0;
  }

  static String size(long bytes) {
    if (bytes < 1024) {
      return bytes + " B";
    }
    String[] units = {"KiB", "MiB", "GiB", "TiB"};
    double v = bytes;
    int u = -1;
    while (v >= 1024 && u < units.length - 1) {
      v /= 1024;
      u++;
    }
    return String.format(java.util.Locale.ROOT, "%.1f %s", v, units[u]);
  }
}

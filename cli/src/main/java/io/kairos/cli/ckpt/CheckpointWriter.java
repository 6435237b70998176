package io.kairos.cli.ckpt;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Writes checkpoints by the protocol, for the throughput bench: every rank's shard at once (one
 * thread per rank), then the manifest, last.
 */
public final class CheckpointWriter {
  private static final ObjectMapper JSON = new ObjectMapper();

  private CheckpointWriter() {}

  /** The step directory's name of {@code step}. */
  public static String stepName(long step) {
    return "step-%010d".formatted(step);
  }

  /**
   * Writes {@code shards} (one per rank) as step {@code step}, then its manifest.
   *
   * @return the bytes written
   */
  public static long write(CheckpointStore store, long step, List<byte[]> shards)
      throws IOException, InterruptedException {
    String name = stepName(step);
    int world = shards.size();
    List<String> paths = new ArrayList<>();
    try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<?>> writes = new ArrayList<>();
      for (int rank = 0; rank < world; rank++) {
        String path = name + "/shard-%05d-of-%05d.bin".formatted(rank, world);
        paths.add(path);
        byte[] data = shards.get(rank);
        writes.add(
            pool.submit(
                () -> {
                  try {
                    store.put(path, data);
                  } catch (IOException e) {
                    throw new UncheckedIOException(e);
                  }
                }));
      }
      for (Future<?> w : writes) {
        w.get();
      }
    } catch (ExecutionException e) {
      if (e.getCause() instanceof UncheckedIOException u) {
        throw u.getCause();
      }
      throw new IOException(e.getCause());
    }
    ObjectNode manifest = JSON.createObjectNode();
    manifest.put("version", 1).put("step", step).put("worldSize", world);
    manifest.put("time", System.currentTimeMillis() / 1000.0);
    ArrayNode list = manifest.putArray("shards");
    long bytes = 0;
    for (int rank = 0; rank < world; rank++) {
      byte[] data = shards.get(rank);
      list.addObject()
          .put("path", paths.get(rank))
          .put("bytes", data.length)
          .put("sha256", S3Store.sha256(data));
      bytes += data.length;
    }
    byte[] body = JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(manifest);
    store.put(name + "/" + Manifests.MANIFEST, body);
    return bytes + body.length;
  }
}

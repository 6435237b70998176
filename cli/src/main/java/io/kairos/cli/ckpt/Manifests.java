package io.kairos.cli.ckpt;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.regex.Matcher;

/**
 * The protocol's reading rule: a checkpoint is complete when its {@code MANIFEST.json} parses,
 * names its own step, and every shard it lists lies inside the location and has the size the
 * manifest records. A checkpoint without its manifest does not exist; a manifest naming a path
 * outside the location is refused, never followed. The same rule as {@code kairos_ckpt.py}'s.
 */
public final class Manifests {
  /** The manifest's name in a step's directory. */
  public static final String MANIFEST = "MANIFEST.json";

  private static final ObjectMapper JSON = new ObjectMapper();

  private Manifests() {}

  /** What a step's directory holds. */
  public enum Status {
    /** The manifest and every shard it names: a restart may take it. */
    COMPLETE,
    /** No manifest, or a shard missing or of another size: it does not exist. */
    INCOMPLETE,
    /** The manifest names a path outside the location: refused. */
    REFUSED
  }

  /**
   * One step's directory.
   *
   * @param name its name ({@code step-0000000042})
   * @param step the step it is named for
   * @param status complete, incomplete or refused
   * @param reason why it is not complete; empty when it is
   * @param bytes the shards' and manifest's bytes (complete ones)
   * @param shards how many shards the manifest names (0 without one)
   */
  public record Found(
      String name, long step, Status status, String reason, long bytes, int shards) {}

  /** Every step directory of {@code store}, oldest first. */
  public static List<Found> scan(CheckpointStore store) throws IOException {
    List<Found> found = new ArrayList<>();
    for (String name : store.steps()) {
      Matcher m = CheckpointStore.STEP.matcher(name);
      if (m.matches()) {
        found.add(read(store, name, Long.parseLong(m.group(1))));
      }
    }
    found.sort(Comparator.comparingLong(Found::step));
    return found;
  }

  /** The newest complete checkpoint of {@code store}, if any. */
  public static Optional<Found> newest(CheckpointStore store) throws IOException {
    List<Found> complete = scan(store).stream().filter(f -> f.status() == Status.COMPLETE).toList();
    return complete.isEmpty() ? Optional.empty() : Optional.of(complete.getLast());
  }

  static Found read(CheckpointStore store, String name, long step) throws IOException {
    Optional<byte[]> body;
    try {
      body = store.get(name + "/" + MANIFEST);
    } catch (IllegalArgumentException e) {
      return new Found(name, step, Status.REFUSED, e.getMessage(), 0, 0);
    }
    if (body.isEmpty()) {
      return incomplete(name, step, "no manifest: being written, or abandoned", 0);
    }
    JsonNode manifest;
    try {
      manifest = JSON.readTree(body.get());
    } catch (IOException e) {
      return incomplete(name, step, "the manifest is not JSON", 0);
    }
    if (manifest == null
        || !manifest.path("step").canConvertToLong()
        || manifest.path("step").asLong() != step) {
      return incomplete(name, step, "the manifest does not name step " + step, 0);
    }
    JsonNode shards = manifest.path("shards");
    if (!shards.isArray() || shards.isEmpty()) {
      return incomplete(name, step, "the manifest names no shard", 0);
    }
    long bytes = body.get().length;
    for (JsonNode shard : shards) {
      String path = shard.path("path").asText(null);
      OptionalLong size;
      try {
        size = store.size(CheckpointStore.checkRelative(path));
      } catch (IllegalArgumentException e) {
        return new Found(name, step, Status.REFUSED, e.getMessage(), 0, shards.size());
      }
      if (size.isEmpty()) {
        return incomplete(name, step, "shard " + path + " is missing", shards.size());
      }
      if (size.getAsLong() != shard.path("bytes").asLong(-1)) {
        return incomplete(
            name,
            step,
            "shard "
                + path
                + " has "
                + size.getAsLong()
                + " bytes, the manifest says "
                + shard.path("bytes").asText(),
            shards.size());
      }
      bytes += size.getAsLong();
    }
    return new Found(name, step, Status.COMPLETE, "", bytes, shards.size());
  }

  private static Found incomplete(String name, long step, String reason, int shards) {
    return new Found(name, step, Status.INCOMPLETE, reason, 0, shards);
  }
}

package io.kairos.cli;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import io.kairos.config.DidYouMean;
import io.kairos.config.StrictYaml;
import io.kairos.protocol.JobSubmission;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.reflect.RecordComponent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * A job file for {@code kairos submit job.yaml}: YAML (or JSON) whose keys are the fields of {@link
 * JobSubmission}, e.g.
 *
 * <pre>
 * name: train-resnet
 * command: [python, train.py, --epochs, "90"]
 * gpus: 16
 * gpusPerNode: 8
 * timeLimit: 12h
 * env: {NCCL_DEBUG: INFO}
 * </pre>
 *
 * <p>{@code gpus: 8-32} makes the job elastic (from 8 to 32 GPUs: {@code gpus: 8, maxGpus: 32}).
 * Unknown keys are an error naming the key and listing the valid ones (a typo must not be silently
 * dropped); so is a value of the wrong type. Also tells a script ({@code #!}) from a job file.
 */
final class JobFile {
  private JobFile() {}

  /** JobSubmission's fields in declaration order: the valid keys. */
  static final List<String> KEYS =
      Arrays.stream(JobSubmission.class.getRecordComponents())
          .map(RecordComponent::getName)
          .toList();

  /** True when the file starts with {@code #!}: a program to run, not a job file. */
  static boolean isScript(Path file) {
    try (InputStream in = Files.newInputStream(file)) {
      byte[] head = in.readNBytes(2);
      return head.length == 2 && head[0] == '#' && head[1] == '!';
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The submission the file describes; bad content is a {@link UsageException} naming it. */
  static JobSubmission read(Path file) {
    String name = file.toString();
    String text;
    try {
      text = Files.readString(file);
    } catch (IOException e) {
      throw new UsageException(name + ": cannot read: " + ApiClient.describe(e));
    }
    boolean json = name.endsWith(".json") || text.stripLeading().startsWith("{");
    JsonNode root;
    try {
      root = StrictYaml.readTree(text, json ? StrictYaml.Syntax.JSON : StrictYaml.Syntax.YAML);
    } catch (JsonProcessingException e) {
      throw new UsageException(
          name + ": not valid " + (json ? "JSON" : "YAML") + ": " + located(e));
    }
    if (root == null || root.isMissingNode() || root.isNull()) {
      throw new UsageException(name + ": empty; give at least: command: [prog, args...]");
    }
    if (!root.isObject()) {
      throw new UsageException(
          name + ": expected a mapping of job fields (" + String.join(", ", KEYS) + ")");
    }
    for (Iterator<String> it = root.fieldNames(); it.hasNext(); ) {
      String key = it.next();
      if (!KEYS.contains(key)) {
        String near = DidYouMean.closest(key, KEYS, 2);
        throw new UsageException(
            name
                + ": unknown key '"
                + key
                + "'"
                + (near == null ? "" : " (did you mean '" + near + "'?)")
                + "; valid keys: "
                + String.join(", ", KEYS));
      }
    }
    GpuRange.expand((com.fasterxml.jackson.databind.node.ObjectNode) root, name);
    try {
      return StrictYaml.treeToValue(root, JobSubmission.class);
    } catch (MismatchedInputException e) {
      String path = path(e);
      throw new UsageException(
          name + ": " + path + ": expected " + expected(path, e.getTargetType()));
    } catch (JsonMappingException e) {
      throw new UsageException(
          name + ": " + path(e) + ": " + Json.firstLine(e.getOriginalMessage()));
    } catch (JsonProcessingException e) {
      throw new UsageException(name + ": " + Json.firstLine(e.getOriginalMessage()));
    }
  }

  private static String expected(String path, Class<?> type) {
    if (path.equals("command")) {
      return "a list of strings, the program and its arguments, e.g. command: [python, train.py]";
    }
    if (type == null) {
      return "another kind of value";
    }
    if (type == Integer.class || type == int.class || type == Long.class || type == long.class) {
      return "a whole number";
    }
    if (List.class.isAssignableFrom(type)) {
      return "a list";
    }
    if (Map.class.isAssignableFrom(type)) {
      return "a mapping of names to values, e.g. env: {NCCL_DEBUG: INFO}";
    }
    if (type == String.class) {
      return "a string";
    }
    return "a " + type.getSimpleName();
  }

  private static String path(JsonMappingException e) {
    String path = StrictYaml.keyPath(e);
    return path.isEmpty() ? "(top)" : path;
  }

  private static String located(JacksonException e) {
    String where = StrictYaml.location(e);
    String message = Json.firstLine(e.getOriginalMessage());
    return where == null ? message : where + ": " + message;
  }
}

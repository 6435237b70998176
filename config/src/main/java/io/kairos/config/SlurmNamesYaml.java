package io.kairos.config;

import static io.kairos.config.YamlChecks.absent;
import static io.kairos.config.YamlChecks.firstLine;
import static io.kairos.config.YamlChecks.kind;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Reads a site's Slurm names file into {@link SlurmNames} (docs/slurm.md, "Names as your site
 * writes them"):
 *
 * <pre>
 * gpuTypes:                 # gres.conf Type= name: the GPU model it means
 *   a100_80g: NVIDIA A100-SXM4-80GB
 *   ampere: a100
 * partitions:               # partition: the queue it is
 *   hopper-prod: research
 * strictQos: false          # true: refuse a --qos that names no priority class
 * </pre>
 *
 * Every problem is reported at once, one line each ({@code file: key.path: problem (fix: ...)}), as
 * a {@link TenancyYaml.InvalidConfig}.
 */
public final class SlurmNamesYaml {
  private static final List<String> ROOT_KEYS = List.of("gpuTypes", "partitions", "strictQos");
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._ +@:-]{0,63}");
  private static final Pattern QUEUE = Pattern.compile("[a-z0-9][a-z0-9._-]{0,62}");

  private SlurmNamesYaml() {}

  /**
   * Reads and checks the file; its name in messages is the path as given.
   *
   * @throws TenancyYaml.InvalidConfig if it cannot be read or is invalid
   */
  public static SlurmNames read(Path file) {
    String text;
    try {
      text = Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException | RuntimeException e) {
      throw new TenancyYaml.InvalidConfig(
          List.of(
              file
                  + ": cannot read the file: "
                  + e.getClass().getSimpleName()
                  + (e.getMessage() == null ? "" : " " + e.getMessage())
                  + " (fix: check the path and that it is a readable UTF-8 text file)"));
    }
    return parse(text, file.toString());
  }

  /** Parses and checks a document; {@code sourceName} names it in messages. */
  public static SlurmNames parse(String text, String sourceName) {
    var c = new YamlChecks(sourceName);
    JsonNode root;
    try {
      root = StrictYaml.readTree(text, StrictYaml.Syntax.YAML);
    } catch (JacksonException | RuntimeException e) {
      throw new TenancyYaml.InvalidConfig(
          List.of(
              sourceName
                  + ": not valid YAML: "
                  + firstLine(e.getMessage())
                  + " (fix: correct the YAML syntax)"));
    }
    if (absent(root)) {
      return SlurmNames.DEFAULTS;
    }
    if (!root.isObject()) {
      c.problem(
          "(document)",
          "must be a mapping with keys " + String.join(", ", ROOT_KEYS) + ", got " + kind(root),
          "see docs/slurm.md");
      throw new TenancyYaml.InvalidConfig(c.problems());
    }
    c.keys(root, "", ROOT_KEYS);
    Map<String, String> gpuTypes =
        names(c, root.get("gpuTypes"), "gpuTypes", NAME, "a model name such as NVIDIA H100");
    Map<String, String> partitions =
        names(c, root.get("partitions"), "partitions", QUEUE, "a queue name such as research");
    Boolean strict = c.bool(root, "strictQos", "");
    if (!c.ok()) {
      throw new TenancyYaml.InvalidConfig(c.problems());
    }
    return new SlurmNames(gpuTypes, partitions, strict != null && strict);
  }

  private static Map<String, String> names(
      YamlChecks c, JsonNode node, String path, Pattern valuePattern, String valueFix) {
    var out = new TreeMap<String, String>();
    if (absent(node) || !c.mapping(node, path)) {
      return out;
    }
    for (var e : node.properties()) {
      String key = e.getKey();
      String kp = path + "." + key;
      if (!NAME.matcher(key).matches()) {
        c.problem(kp, "'" + key + "' is not a name", "use letters, digits, '.', '_' or '-'");
        continue;
      }
      if (out.containsKey(key.toLowerCase(Locale.ROOT))) {
        c.problem(kp, "named twice (names are matched in any case)", "keep one of them");
        continue;
      }
      JsonNode value = e.getValue();
      if (!value.isTextual() || !valuePattern.matcher(value.asText()).matches()) {
        c.problem(kp, "must be " + valueFix + ", got " + kind(value), "write " + valueFix);
        continue;
      }
      out.put(key.toLowerCase(Locale.ROOT), value.asText());
    }
    return out;
  }
}

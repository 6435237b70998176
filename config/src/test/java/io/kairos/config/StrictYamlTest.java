package io.kairos.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonMappingException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StrictYamlTest {
  record Group(int count, Integer gpus) {}

  record File(List<Group> nodes) {}

  @Test
  void aKeyGivenTwiceIsAnErrorWithItsLine() {
    var e =
        catchThrowableOfType(
            JacksonException.class,
            () -> StrictYaml.readTree("a: 1\nb: 2\na: 3\n", StrictYaml.Syntax.YAML));

    assertThat(e.getOriginalMessage()).contains("Duplicate field 'a'");
    assertThat(StrictYaml.location(e)).startsWith("line 3, column ");
  }

  @Test
  void jsonIsReadAsJsonAndStrictlyToo() throws IOException {
    assertThat(StrictYaml.readTree("{\"a\": [1, 2]}", StrictYaml.Syntax.JSON).get("a").size())
        .isEqualTo(2);
    var e =
        catchThrowableOfType(
            JacksonException.class,
            () -> StrictYaml.readTree("{\"a\": 1, \"a\": 2}", StrictYaml.Syntax.JSON));
    assertThat(e.getOriginalMessage()).contains("Duplicate field 'a'");
    assertThat(StrictYaml.location(e)).startsWith("line 1, column ");
  }

  @Test
  void anEmptyDocumentHasNoContent() throws IOException {
    var root = StrictYaml.readTree("", StrictYaml.Syntax.YAML);
    assertThat(root == null || root.isMissingNode() || root.isNull()).isTrue();
  }

  @Test
  void bindingNamesTheKeyPathOfAnUnknownKey() throws IOException {
    var tree =
        StrictYaml.readTree("nodes:\n  - count: 2\n    colour: red\n", StrictYaml.Syntax.YAML);

    var e =
        catchThrowableOfType(
            JsonMappingException.class, () -> StrictYaml.treeToValue(tree, File.class));

    assertThat(StrictYaml.keyPath(e)).isEqualTo("nodes[0].colour");
  }

  @Test
  void aNullForAPrimitiveIsAnError() throws IOException {
    var tree = StrictYaml.readTree("nodes:\n  - count:\n    gpus: 8\n", StrictYaml.Syntax.YAML);

    var e =
        catchThrowableOfType(
            JsonMappingException.class, () -> StrictYaml.treeToValue(tree, File.class));

    assertThat(StrictYaml.keyPath(e)).isEqualTo("nodes[0].count");
    assertThat(
            StrictYaml.treeToValue(
                StrictYaml.readTree("nodes: [{count: 1}]", StrictYaml.Syntax.YAML), File.class))
        .isEqualTo(new File(List.of(new Group(1, null))));
  }

  @Test
  void aFileIsBoundStrictly(@TempDir Path dir) throws IOException {
    Path good = Files.writeString(dir.resolve("good.yaml"), "nodes: [{count: 2, gpus: 8}]\n");
    assertThat(StrictYaml.readValue(good, File.class))
        .isEqualTo(new File(List.of(new Group(2, 8))));

    Path twice = Files.writeString(dir.resolve("twice.yaml"), "nodes: [{count: 2, count: 3}]\n");
    var duplicate =
        catchThrowableOfType(
            JsonMappingException.class, () -> StrictYaml.readValue(twice, File.class));
    assertThat(duplicate.getOriginalMessage()).contains("Duplicate field 'count'");
    assertThat(StrictYaml.keyPath(duplicate)).isEqualTo("nodes[0]");

    Path empty = Files.writeString(dir.resolve("empty.yaml"), "");
    var none =
        catchThrowableOfType(
            JsonMappingException.class, () -> StrictYaml.readValue(empty, File.class));
    assertThat(StrictYaml.keyPath(none)).isEmpty();
  }
}

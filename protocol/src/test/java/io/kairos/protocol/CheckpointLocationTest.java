package io.kairos.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Which checkpoint locations a job may give, and how an {@code s3://} one is read. */
class CheckpointLocationTest {
  record Case(String location, String problem) {}

  @Test
  void validLocations() {
    for (String ok :
        List.of(
            "/ckpt/run1",
            "/",
            "s3://bucket",
            "s3://my-bucket.example/runs/run-1",
            "s3://abc/a/b/c/",
            "s3://b12/x")) {
      assertThat(CheckpointLocation.problem(ok)).as(ok).isNull();
    }
    assertThat(CheckpointLocation.problem(null)).isNull();
    assertThat(CheckpointLocation.problem("")).as("none").isNull();
  }

  @Test
  void eachBadLocationIsNamedWithItsFix() {
    List<Case> cases =
        List.of(
            new Case("ckpt/run1", "absolute path or an s3://bucket/prefix"),
            new Case("https://host/x", "no other scheme"),
            new Case("file:///ckpt", "no other scheme"),
            new Case("/ckpt/a\u0000b", "control characters"),
            new Case("/ckpt/a\nb", "control characters"),
            new Case("s3://", "S3 bucket"),
            new Case("s3://ab", "S3 bucket"),
            new Case("s3://Bucket/x", "S3 bucket"),
            new Case("s3://-bucket/x", "S3 bucket"),
            new Case("s3://bu..cket/x", "S3 bucket"),
            new Case("s3://bucket_1/x", "S3 bucket"),
            new Case("s3://" + "b".repeat(64) + "/x", "S3 bucket"),
            new Case("s3://bucket//x", "empty, '.' or '..' parts"),
            new Case("s3://bucket/a/../b", "empty, '.' or '..' parts"),
            new Case("s3://bucket/./b", "empty, '.' or '..' parts"),
            new Case("s3://bucket/a\\b", "'\\'"),
            new Case("s3://bucket/" + "p".repeat(901), "at most 900"),
            new Case("/" + "d".repeat(4096), "at most 4096"));
    for (Case c : cases) {
      assertThat(CheckpointLocation.problem(c.location()))
          .as(c.location())
          .isNotNull()
          .contains(c.problem());
    }
  }

  @Test
  void anS3LocationIsItsBucketAndPrefix() {
    var l = CheckpointLocation.parse("s3://my-bucket/runs/run-1/");
    assertThat(l.objectStorage()).isTrue();
    assertThat(l.bucket()).isEqualTo("my-bucket");
    assertThat(l.prefix()).isEqualTo("runs/run-1");
    assertThat(l.url()).isEqualTo("s3://my-bucket/runs/run-1");
    assertThat(CheckpointLocation.parse("s3://my-bucket").url()).isEqualTo("s3://my-bucket");
    var d = CheckpointLocation.parse("/ckpt/run1");
    assertThat(d.objectStorage()).isFalse();
    assertThat(d.url()).isEqualTo("file:///ckpt/run1");
    assertThatThrownBy(() -> CheckpointLocation.parse("s3://B/x"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("S3 bucket");
    assertThatThrownBy(() -> CheckpointLocation.parse(""))
        .isInstanceOf(IllegalArgumentException.class);
  }
}

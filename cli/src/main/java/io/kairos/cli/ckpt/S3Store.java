package io.kairos.cli.ckpt;

import io.kairos.protocol.CheckpointLocation;
import java.io.IOException;
import java.net.URI;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CommonPrefix;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * Checkpoints in S3-compatible object storage through the AWS SDK for Java v2, under {@code
 * s3://bucket/prefix}. A PUT is atomic (the object is whole or absent), so no temporary names; each
 * object carries its SHA-256 as metadata ({@code x-amz-meta-sha256}), as {@code kairos_ckpt.py}
 * writes it. Credentials come the SDK's default way (the {@code AWS_*} variables, {@code
 * ~/.aws/credentials}, an instance role): the caller's own.
 */
public final class S3Store implements CheckpointStore {
  /**
   * How to reach the store.
   *
   * @param endpoint an S3-compatible endpoint ({@code http://host:port}); null for AWS's own
   * @param region the region; null for {@code AWS_REGION}, else us-east-1
   */
  public record Settings(String endpoint, String region) {
    /** From the environment: {@code KAIROS_S3_ENDPOINT} or {@code AWS_ENDPOINT_URL}, then AWS. */
    public static Settings fromEnvironment(Map<String, String> env, String endpoint) {
      String e = endpoint;
      if (e == null) {
        e = env.getOrDefault("KAIROS_S3_ENDPOINT", env.get("AWS_ENDPOINT_URL"));
      }
      return new Settings(
          e == null || e.isBlank() ? null : e,
          env.getOrDefault("AWS_REGION", env.get("AWS_DEFAULT_REGION")));
    }
  }

  private final S3Client s3;
  private final String bucket;
  private final String prefix;
  private final String url;

  private S3Store(S3Client s3, CheckpointLocation where) {
    this.s3 = s3;
    this.bucket = where.bucket();
    this.prefix = where.prefix();
    this.url = where.url();
  }

  /** A store on {@code where} with a client of its own (closed with the store). */
  static S3Store open(CheckpointLocation where, Settings settings) throws IOException {
    try {
      var b =
          S3Client.builder()
              .httpClient(UrlConnectionHttpClient.create())
              .credentialsProvider(DefaultCredentialsProvider.builder().build())
              .region(Region.of(settings.region() == null ? "us-east-1" : settings.region()))
              // S3-compatible servers differ in the newer integrity headers: send them when the
              // API needs them only.
              .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
              .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED);
      if (settings.endpoint() != null) {
        b.endpointOverride(URI.create(settings.endpoint())).forcePathStyle(true);
      }
      return new S3Store(b.build(), where);
    } catch (SdkException | IllegalArgumentException e) {
      throw new IOException("cannot reach " + where.url() + ": " + e.getMessage(), e);
    }
  }

  @Override
  public String url() {
    return url;
  }

  private String key(String path) {
    String rel = CheckpointStore.checkRelative(path);
    return prefix.isEmpty() ? rel : prefix + "/" + rel;
  }

  private String base() {
    return prefix.isEmpty() ? "" : prefix + "/";
  }

  @Override
  public List<String> steps() throws IOException {
    List<String> found = new ArrayList<>();
    String base = base();
    for (ListObjectsV2Response page : pages(base, "/")) {
      for (CommonPrefix p : page.commonPrefixes()) {
        String name = p.prefix().substring(base.length());
        name = name.endsWith("/") ? name.substring(0, name.length() - 1) : name;
        if (STEP.matcher(name).matches()) {
          found.add(name);
        }
      }
    }
    return found;
  }

  @Override
  public List<String> names(String step) throws IOException {
    String base = key(step) + "/";
    List<String> names = new ArrayList<>();
    for (ListObjectsV2Response page : pages(base, null)) {
      for (S3Object o : page.contents()) {
        names.add(o.key().substring(base.length()));
      }
    }
    return names;
  }

  private Iterable<ListObjectsV2Response> pages(String from, String delimiter) throws IOException {
    var request = ListObjectsV2Request.builder().bucket(bucket).prefix(from);
    if (delimiter != null) {
      request.delimiter(delimiter);
    }
    try {
      return s3.listObjectsV2Paginator(request.build()).stream().toList();
    } catch (SdkException e) {
      throw failed("list " + url + "/" + from, e);
    }
  }

  @Override
  public Optional<byte[]> get(String path) throws IOException {
    try {
      return Optional.of(s3.getObjectAsBytes(r -> r.bucket(bucket).key(key(path))).asByteArray());
    } catch (NoSuchKeyException e) {
      return Optional.empty();
    } catch (SdkException e) {
      throw failed("read " + path, e);
    }
  }

  @Override
  public OptionalLong size(String path) throws IOException {
    try {
      return OptionalLong.of(s3.headObject(r -> r.bucket(bucket).key(key(path))).contentLength());
    } catch (NoSuchKeyException e) {
      return OptionalLong.empty();
    } catch (S3Exception e) {
      if (e.statusCode() == 404) {
        return OptionalLong.empty();
      }
      throw failed("look up " + path, e);
    } catch (SdkException e) {
      throw failed("look up " + path, e);
    }
  }

  @Override
  public void put(String path, byte[] data) throws IOException {
    try {
      s3.putObject(
          r -> r.bucket(bucket).key(key(path)).metadata(Map.of("sha256", sha256(data))),
          RequestBody.fromBytes(data));
    } catch (SdkException e) {
      throw failed("write " + path, e);
    }
  }

  @Override
  public void deleteStep(String step) throws IOException {
    // One DELETE per object: a step holds a manifest and a shard per rank, and the batch call's
    // integrity headers are where S3-compatible servers differ most.
    for (String name : names(step)) {
      String key = key(step) + "/" + name;
      try {
        s3.deleteObject(r -> r.bucket(bucket).key(key));
      } catch (SdkException e) {
        throw failed("delete " + step + "/" + name, e);
      }
    }
  }

  /** Creates the bucket (tests and benches against a fresh server); nothing if it exists. */
  public void createBucket() throws IOException {
    try {
      s3.createBucket(r -> r.bucket(bucket));
    } catch (S3Exception e) {
      if (e.statusCode() != 409) {
        throw failed("create bucket " + bucket, e);
      }
    } catch (SdkException e) {
      throw failed("create bucket " + bucket, e);
    }
  }

  @Override
  public void close() {
    s3.close();
  }

  private IOException failed(String what, SdkException e) {
    String message =
        e instanceof S3Exception s && s.awsErrorDetails() != null
            ? s.awsErrorDetails().errorCode() + " (HTTP " + s.statusCode() + ")"
            : e.getMessage();
    return new IOException("S3 " + url + ": cannot " + what + ": " + message, e);
  }

  static String sha256(byte[] data) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}

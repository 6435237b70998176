package io.kairos.core.tenancy;

import java.util.Objects;

/**
 * A resource a quota is counted in: GPUs of one flavor (the GPU model name, as on the nodes), CPUs
 * (whole cores) or memory (bytes). Written {@code gpu:H100}, {@code cpu}, {@code memory} in
 * configuration and messages.
 *
 * <p>Flavors are separate resources: quota of {@code gpu:H100} is never lent as {@code gpu:A100}.
 * The natural order (GPUs by model, then CPUs, then memory) is the ledger's resource order.
 *
 * @param kind what is counted
 * @param flavor the GPU model for {@link Kind#GPU}; empty for CPUs and memory
 */
public record Resource(Kind kind, String flavor) implements Comparable<Resource> {
  /** What a resource counts, and its unit. */
  public enum Kind {
    /** GPUs of one model; unit: GPUs. */
    GPU,
    /** CPU cores; unit: cores. */
    CPU,
    /** Memory; unit: bytes. */
    MEMORY
  }

  /** CPU cores. */
  public static final Resource CPUS = new Resource(Kind.CPU, "");

  /** Memory in bytes. */
  public static final Resource MEMORY_BYTES = new Resource(Kind.MEMORY, "");

  public Resource {
    Objects.requireNonNull(kind, "resource.kind");
    Objects.requireNonNull(flavor, "resource.flavor");
    if (kind == Kind.GPU) {
      if (flavor.isBlank() || !flavor.strip().equals(flavor) || flavor.indexOf(':') >= 0) {
        throw new IllegalArgumentException(
            "resource gpu:'"
                + flavor
                + "': the GPU model must be non-blank, without spaces around it or ':'"
                + " (fix: use the model name the nodes report, e.g. gpu:H100)");
      }
    } else if (!flavor.isEmpty()) {
      throw new IllegalArgumentException(
          "resource "
              + kind.name().toLowerCase(java.util.Locale.ROOT)
              + ":"
              + flavor
              + ": only GPUs have flavors (fix: write '"
              + kind.name().toLowerCase(java.util.Locale.ROOT)
              + "')");
    }
  }

  /** GPUs of one model, e.g. {@code gpu("H100")}. */
  public static Resource gpu(String model) {
    return new Resource(Kind.GPU, model);
  }

  /** Parses {@code gpu:MODEL}, {@code cpu} or {@code memory}. */
  public static Resource parse(String text) {
    Objects.requireNonNull(text, "resource");
    if (text.startsWith("gpu:")) {
      return gpu(text.substring(4));
    }
    return switch (text) {
      case "cpu" -> CPUS;
      case "memory" -> MEMORY_BYTES;
      default ->
          throw new IllegalArgumentException(
              "resource '" + text + "': unknown (fix: use gpu:MODEL, cpu or memory)");
    };
  }

  @Override
  public int compareTo(Resource other) {
    int byKind = kind.compareTo(other.kind);
    return byKind != 0 ? byKind : flavor.compareTo(other.flavor);
  }

  @Override
  public String toString() {
    return switch (kind) {
      case GPU -> "gpu:" + flavor;
      case CPU -> "cpu";
      case MEMORY -> "memory";
    };
  }
}

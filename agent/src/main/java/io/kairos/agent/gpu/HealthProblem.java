package io.kairos.agent.gpu;

import java.util.Objects;

/**
 * One thing wrong with a node, as {@code kairos nodes} shows it.
 *
 * @param gpuIndex the GPU's index at registration, or {@link #NODE} for the node as a whole
 * @param kind what went wrong, for code; tests and the controller switch on this, not the wording
 * @param reason one line for a human, e.g. {@code "GPU 1 at 94 C, slowdown threshold 90 C"}
 */
public record HealthProblem(int gpuIndex, Kind kind, String reason) {
  /** The {@code gpuIndex} of a problem that concerns no single GPU. */
  public static final int NODE = -1;

  public HealthProblem {
    if (gpuIndex < NODE) {
      throw new IllegalArgumentException("problem.gpuIndex must be >= -1, got " + gpuIndex);
    }
    Objects.requireNonNull(kind, "problem.kind");
    Objects.requireNonNull(reason, "problem.reason");
    if (reason.isBlank() || reason.contains("\n")) {
      throw new IllegalArgumentException("problem.reason must be one non-blank line: " + reason);
    }
  }

  public enum Kind {
    /** nvidia-smi failed, timed out or could not start. */
    NVIDIA_SMI_FAILED,
    /** nvidia-smi says a GPU is lost or cannot get its handle: it needs a reset or a reboot. */
    GPU_LOST,
    /** A GPU seen at registration is gone. */
    GPU_MISSING,
    /** A GPU not seen at registration is there: the node must register again. */
    GPU_APPEARED,
    /** Uncorrectable ECC errors rose past the policy. */
    ECC_ERRORS,
    /** A page retirement or row remapping is pending, or row remapping failed. */
    PENDING_REPAIR,
    /** At or above the slowdown threshold. */
    THERMAL,
    /** The external health check program failed, timed out or could not start. */
    CHECK_PROGRAM
  }
}

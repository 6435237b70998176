package io.kairos.agent.gpu;

import java.io.IOException;

/**
 * nvidia-smi could not tell us what GPUs the node has: it failed to start, timed out, exited
 * non-zero or printed what we cannot parse. The message names the command, its exit code and its
 * first stderr line, e.g. {@code "nvidia-smi -q -x exited 9: NVIDIA-SMI has failed because it
 * couldn't communicate with the NVIDIA driver"}.
 */
public final class NvidiaSmiException extends IOException {
  private static final long serialVersionUID = 1L;

  public NvidiaSmiException(String message) {
    super(message);
  }

  public NvidiaSmiException(String message, Throwable cause) {
    super(message, cause);
  }
}

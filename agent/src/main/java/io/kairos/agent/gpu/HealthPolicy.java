package io.kairos.agent.gpu;

/**
 * Thresholds for {@link HealthChecker}.
 *
 * @param allowedEccRise how many uncorrectable volatile ECC errors may appear since registration
 *     before the GPU is unhealthy; 0 (the default) means any new one is a problem, as DCGM's health
 *     watch treats a double-bit error
 * @param temperatureMarginC a GPU is too hot at {@code slowdown threshold - margin}; 0 by default,
 *     i.e. at or above the threshold where it starts throttling
 * @param fallbackMaxTemperatureC the limit for a GPU that reports no slowdown threshold
 * @param pendingRepairsAreProblems whether a pending page retirement or row remapping (which needs
 *     a GPU reset to take effect) makes the GPU unhealthy; a row remapping failure always does
 */
public record HealthPolicy(
    long allowedEccRise,
    int temperatureMarginC,
    int fallbackMaxTemperatureC,
    boolean pendingRepairsAreProblems) {
  /** Any ECC rise, the slowdown threshold (or 90 C), pending repairs flagged. */
  public static final HealthPolicy DEFAULTS = new HealthPolicy(0, 0, 90, true);

  public HealthPolicy {
    if (allowedEccRise < 0) {
      throw new IllegalArgumentException(
          "health.allowedEccRise must be >= 0, got " + allowedEccRise);
    }
    if (temperatureMarginC < 0 || temperatureMarginC > 50) {
      throw new IllegalArgumentException(
          "health.temperatureMarginC must be between 0 and 50, got " + temperatureMarginC);
    }
    if (fallbackMaxTemperatureC < 30 || fallbackMaxTemperatureC > 130) {
      throw new IllegalArgumentException(
          "health.fallbackMaxTemperatureC must be between 30 and 130, got "
              + fallbackMaxTemperatureC);
    }
  }
}

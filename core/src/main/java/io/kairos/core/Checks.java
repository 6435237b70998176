package io.kairos.core;

import java.util.function.Supplier;

/** One-line argument and state checks with messages that name the field and the value. */
public final class Checks {
  private Checks() {}

  public static long positive(long value, String field) {
    if (value <= 0) {
      throw new IllegalArgumentException(field + " must be > 0, got " + value);
    }
    return value;
  }

  public static int positive(int value, String field) {
    if (value <= 0) {
      throw new IllegalArgumentException(field + " must be > 0, got " + value);
    }
    return value;
  }

  public static long nonNegative(long value, String field) {
    if (value < 0) {
      throw new IllegalArgumentException(field + " must be >= 0, got " + value);
    }
    return value;
  }

  public static int nonNegative(int value, String field) {
    if (value < 0) {
      throw new IllegalArgumentException(field + " must be >= 0, got " + value);
    }
    return value;
  }

  public static int inRange(int value, int min, int max, String field) {
    if (value < min || value > max) {
      throw new IllegalArgumentException(
          field + " must be between " + min + " and " + max + ", got " + value);
    }
    return value;
  }

  public static void argument(boolean ok, Supplier<String> message) {
    if (!ok) {
      throw new IllegalArgumentException(message.get());
    }
  }

  public static void state(boolean ok, Supplier<String> message) {
    if (!ok) {
      throw new IllegalStateException(message.get());
    }
  }
}

package io.kairos.testkit;

import io.kairos.core.sched.Policy;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.provider.Arguments;

/**
 * Support for properties: the seeds to run, and checks that put the seed (and, for generated cases,
 * a shrunk case) into every failure message so it can be replayed and turned into a named scenario.
 *
 * <p>Seeds: {@code 0..199} by default; {@code -Dkairos.propertySeeds=N} runs {@code 0..N-1} (a
 * nightly soak), {@code -Dkairos.propertySeed=S} runs only seed S (replay).
 */
public final class Properties {
  public static final long DEFAULT_SEEDS = 200;
  private static final int MAX_SHRINK_RUNS = 400;

  private Properties() {}

  /** A body that may throw anything; failures are rethrown with the seed. */
  @FunctionalInterface
  public interface Body {
    void run() throws Throwable;
  }

  /** The seeds every property runs over. */
  public static LongStream seeds() {
    String only = System.getProperty("kairos.propertySeed");
    if (only != null && !only.isBlank()) {
      return LongStream.of(Long.parseLong(only.trim()));
    }
    return LongStream.range(0, Long.getLong("kairos.propertySeeds", DEFAULT_SEEDS));
  }

  /** (policy, seed) pairs, policy named for the test report. */
  public static Stream<Arguments> policiesAndSeeds(List<Policy> policies) {
    return policies.stream()
        .flatMap(p -> seeds().mapToObj(s -> Arguments.of(Named.of(p.name(), p), s)));
  }

  /** Every policy of {@link Policy#ALL} with every seed. */
  public static Stream<Arguments> allPoliciesAndSeeds() {
    return policiesAndSeeds(Policy.ALL);
  }

  /** Runs {@code body}; any failure is rethrown as an AssertionError naming the seed. */
  public static void check(long seed, Body body) {
    try {
      body.run();
    } catch (Throwable t) {
      throw new AssertionError(withSeed(seed, t.getMessage()), t);
    }
  }

  /** Prefixes "seed=N: " unless the message already starts with it (harness messages do). */
  static String withSeed(long seed, String message) {
    String prefix = "seed=" + seed;
    return message != null && message.startsWith(prefix + " ") ? message : prefix + ": " + message;
  }

  /**
   * Runs {@code property} on {@code generated}; on failure, shrinks the case by dropping jobs while
   * it still fails, and rethrows with the seed, the first failure and the shrunk case.
   */
  public static void check(Generators.Case generated, Consumer<Generators.Case> property) {
    Throwable first = failure(generated, property);
    if (first == null) {
      return;
    }
    Generators.Case smallest = generated;
    Throwable last = first;
    int runs = 0;
    // Drop chunks of jobs, halving the chunk size, while the case still fails.
    for (int chunk = Math.max(1, smallest.jobs().size() / 2);
        chunk >= 1 && runs < MAX_SHRINK_RUNS;
        chunk /= 2) {
      boolean progress = true;
      while (progress && runs < MAX_SHRINK_RUNS) {
        progress = false;
        for (int from = 0; from < smallest.jobs().size() && runs < MAX_SHRINK_RUNS; from += chunk) {
          var fewer = new ArrayList<>(smallest.jobs());
          fewer.subList(from, Math.min(fewer.size(), from + chunk)).clear();
          if (fewer.isEmpty()) {
            continue;
          }
          var candidate = smallest.withJobs(fewer);
          runs++;
          Throwable t = failure(candidate, property);
          if (t != null) {
            smallest = candidate;
            last = t;
            progress = true;
            break;
          }
        }
      }
    }
    var error =
        new AssertionError(
            withSeed(generated.seed(), first.getMessage())
                + "\n  shrunk from "
                + generated.jobs().size()
                + " to "
                + smallest.jobs().size()
                + " jobs, failing with: "
                + last.getMessage()
                + "\n  "
                + smallest,
            first);
    if (last != first) {
      error.addSuppressed(last);
    }
    throw error;
  }

  private static Throwable failure(Generators.Case c, Consumer<Generators.Case> property) {
    try {
      property.accept(c);
      return null;
    } catch (Throwable t) {
      if (t instanceof VirtualMachineError vm) {
        throw vm;
      }
      return t;
    }
  }
}

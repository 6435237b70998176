package io.kairos.testkit;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What a property actually checked. A property that checks a case only when the generator produced
 * it (a job that got a reservation, a pass that preempted) passes on nothing once the generator
 * stops producing it; counting the cases it met, and failing when too few runs met them, makes that
 * visible.
 *
 * <pre>{@code
 * static final Coverage KEPT = new Coverage("reservationsAreKept");
 *
 * void reservationsAreKept(long seed) {
 *   var run = KEPT.run();                        // one per seed (or policy and seed)
 *   for (var job : h.jobs()) {
 *     if (job.firstReservation() == null) continue;
 *     run.saw("a job with a reservation");       // marks this run, counts the case
 *     ...
 *   }
 * }
 *
 * @AfterAll
 * static void theCasesCameUp() {
 *   KEPT.assertSeen("a job with a reservation", 0.5);   // in at least half the runs
 * }
 * }</pre>
 *
 * <p>Shares are checked only over {@link #MIN_RUNS} runs or more, so replaying one seed ({@code
 * -Dkairos.propertySeed=S}) or running one property by name checks nothing here. Thread-safe.
 */
public final class Coverage {
  /** Below this many runs, {@link #assertSeen} checks nothing. */
  public static final int MIN_RUNS = 20;

  private final String property;
  private final AtomicLong runs = new AtomicLong();
  private final Map<String, AtomicLong> runsThatSaw = new ConcurrentHashMap<>();
  private final Map<String, AtomicLong> times = new ConcurrentHashMap<>();

  public Coverage(String property) {
    this.property = property;
  }

  /** Starts counting one run of the property (one seed, or one policy and seed). */
  public Run run() {
    runs.incrementAndGet();
    return new Run();
  }

  /** How many runs started. */
  public long runs() {
    return runs.get();
  }

  /** In how many runs {@code what} came up at least once. */
  public long runsThatSaw(String what) {
    var n = runsThatSaw.get(what);
    return n == null ? 0 : n.get();
  }

  /** How often {@code what} came up over all runs. */
  public long times(String what) {
    var n = times.get(what);
    return n == null ? 0 : n.get();
  }

  /**
   * Fails unless at least {@code minShare} (0..1) of the runs saw {@code what}, when {@link
   * #MIN_RUNS} or more ran; the message gives the counts of every case seen.
   */
  public void assertSeen(String what, double minShare) {
    long total = runs.get();
    if (total < MIN_RUNS) {
      return;
    }
    long saw = runsThatSaw(what);
    if (saw < Math.ceil(minShare * total)) {
      throw new AssertionError(
          property
              + ": '"
              + what
              + "' came up in "
              + saw
              + " of "
              + total
              + " runs, expected at least "
              + Math.round(minShare * 100)
              + "%: the generator no longer produces the case the property checks ("
              + this
              + ")");
    }
  }

  @Override
  public String toString() {
    var counts = new TreeMap<String, String>();
    times.forEach((what, n) -> counts.put(what, runsThatSaw(what) + " runs, " + n + " times"));
    return property + " over " + runs.get() + " runs: " + counts;
  }

  /** One run: marks what it met. Confined to the thread running the property. */
  public final class Run {
    private final Set<String> seen = new HashSet<>();

    private Run() {}

    /** {@code what} came up (and was checked) once more in this run. */
    public void saw(String what) {
      times.computeIfAbsent(what, _ -> new AtomicLong()).incrementAndGet();
      if (seen.add(what)) {
        runsThatSaw.computeIfAbsent(what, _ -> new AtomicLong()).incrementAndGet();
      }
    }
  }
}

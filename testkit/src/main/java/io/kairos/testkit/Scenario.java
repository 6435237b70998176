package io.kairos.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.core.model.Cluster;
import io.kairos.core.model.JobId;
import io.kairos.core.sched.PassResult;
import io.kairos.core.sched.Policy;
import io.kairos.core.sched.Reason;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A named scheduling scenario, one row of a scenario table: a cluster, jobs already running, jobs
 * waiting, one pass under a policy, and what that pass (and, optionally, the rest of the run) must
 * show.
 *
 * <pre>{@code
 * Scenario.named("short job backfills before the reservation")
 *     .cluster(Clusters.oneRack(4, 1)).policy(Policy.EASY)
 *     .running("r", Jobs.gpus(3).limit(100))
 *     .pending("head", Jobs.gpus(4).limit(50))
 *     .pending("short", Jobs.gpus(1).limit(100))
 *     .expect(Scenario.reserved("head", 100), Scenario.starts("short"));
 * }</pre>
 *
 * <p>Running jobs are submitted at t=0 in the order given and started by one committed pass (the
 * scenario fails if any of them does not start). Pending jobs are then submitted in the order given
 * (at their arrival time, default 0), the clock moves to the pass time (default: the last arrival),
 * and one pass runs. Expectations about later starts ({@link #startsAt}) commit the pass and run
 * the event loop until idle.
 */
public final class Scenario {
  /** One thing the scenario must show. */
  public sealed interface Expect {}

  /** The job starts in the examined pass (on exactly these node indexes, when given). */
  public record Starts(String job, int[] nodes) implements Expect {
    @Override
    public String toString() {
      return job + " starts" + (nodes == null ? "" : " on " + Arrays.toString(nodes));
    }
  }

  /** The job gets a reservation at {@code startSec} in the examined pass. */
  public record Reserved(String job, long startSec) implements Expect {}

  /** The job does not start, for {@code reason}. */
  public record Waits(String job, Reason reason) implements Expect {}

  /** Running the scenario to the end, the job starts at exactly {@code startSec}. */
  public record StartsAt(String job, long startSec) implements Expect {}

  /** The examined pass makes exactly these many reservations. */
  public record ReservationCount(int count) implements Expect {}

  public static Starts starts(String job) {
    return new Starts(job, null);
  }

  public static Starts startsOn(String job, int... nodes) {
    return new Starts(job, nodes);
  }

  public static Reserved reserved(String job, long startSec) {
    return new Reserved(job, startSec);
  }

  public static Waits waits(String job, Reason reason) {
    return new Waits(job, reason);
  }

  public static StartsAt startsAt(String job, long startSec) {
    return new StartsAt(job, startSec);
  }

  public static ReservationCount reservations(int count) {
    return new ReservationCount(count);
  }

  private record Entry(String label, Jobs.Builder job, long atSec) {}

  private final String name;
  private Cluster cluster = Clusters.oneRack(4, 1);
  private Policy policy = Policy.EASY;
  private io.kairos.core.tenancy.Tenants tenants = io.kairos.core.tenancy.Tenants.none();
  private final List<Entry> running = new ArrayList<>();
  private final List<Entry> pending = new ArrayList<>();
  private long passAtSec = -1;
  private final List<Expect> expectations = new ArrayList<>();

  private Scenario(String name) {
    this.name = name;
  }

  public static Scenario named(String name) {
    return new Scenario(name);
  }

  public Scenario cluster(Cluster cluster) {
    this.cluster = cluster;
    return this;
  }

  /** The examined pass runs with this tenancy; the setup pass (running jobs) without. */
  public Scenario tenants(io.kairos.core.tenancy.Tenants tenants) {
    this.tenants = tenants;
    return this;
  }

  public Scenario policy(Policy policy) {
    this.policy = policy;
    return this;
  }

  /** A job submitted and started at t=0, before the examined pass. */
  public Scenario running(String label, Jobs.Builder job) {
    running.add(new Entry(label, job, 0));
    return this;
  }

  /** A job submitted at t=0 that waits for the examined pass. */
  public Scenario pending(String label, Jobs.Builder job) {
    return pendingAt(0, label, job);
  }

  /** A job submitted at {@code atSec} (in order) that waits for the examined pass. */
  public Scenario pendingAt(long atSec, String label, Jobs.Builder job) {
    pending.add(new Entry(label, job, atSec));
    return this;
  }

  /** When the examined pass runs (default: the last arrival). */
  public Scenario passAt(long sec) {
    this.passAtSec = sec;
    return this;
  }

  public Scenario expect(Expect... expect) {
    expectations.addAll(List.of(expect));
    return this;
  }

  public String name() {
    return name;
  }

  public Policy policy() {
    return policy;
  }

  /** The outcome of {@link #run()}: the harness, the examined pass and the labels' ids. */
  public record Run(SchedulerHarness harness, PassResult pass, Map<String, JobId> ids) {
    public JobId id(String label) {
      var id = ids.get(label);
      if (id == null) {
        throw new AssertionError("no job labelled " + label);
      }
      return id;
    }
  }

  /** Sets the scenario up and runs the examined pass (not committed). */
  public Run run() {
    var h = SchedulerHarness.of(cluster).policy(policy);
    var ids = new LinkedHashMap<String, JobId>();
    for (var e : running) {
      ids.put(e.label, h.submit(e.job));
    }
    if (!running.isEmpty()) {
      var first = h.step();
      for (var e : running) {
        assertThat(Passes.started(first))
            .as("%s: running job %s must start in the setup pass", name, e.label)
            .contains(ids.get(e.label));
      }
    }
    long last = 0;
    for (var e : pending) {
      ids.put(e.label, h.submitAt(e.atSec, e.job));
      last = Math.max(last, e.atSec);
    }
    h.advanceTo(passAtSec >= 0 ? passAtSec : last);
    h.tenants(tenants);
    return new Run(h, h.runPass(), ids);
  }

  /** Runs the scenario and checks every expectation. */
  public Run check() {
    var run = run();
    var pass = run.pass();
    boolean timeline = false;
    for (var expect : expectations) {
      switch (expect) {
        case Starts(var job, var nodes) -> {
          var start = Passes.start(pass, run.id(job));
          assertThat(start)
              .as("%s: %s starts (reason %s)", name, job, reasonOrNone(pass, run.id(job)))
              .isPresent();
          if (nodes != null) {
            assertThat(start.get().placement().nodes())
                .as("%s: nodes of %s", name, job)
                .containsExactly(nodes);
          }
        }
        case Reserved(var job, var startSec) -> {
          var r = Passes.reservation(pass, run.id(job));
          assertThat(r).as("%s: %s is reserved", name, job).isPresent();
          assertThat(r.get().startSec()).as("%s: reservation of %s", name, job).isEqualTo(startSec);
          assertThat(Passes.reason(pass, run.id(job)))
              .as("%s: reason of %s", name, job)
              .contains(Reason.RESERVED);
        }
        case Waits(var job, var reason) -> {
          assertThat(Passes.start(pass, run.id(job)))
              .as("%s: %s must not start", name, job)
              .isEmpty();
          assertThat(Passes.reason(pass, run.id(job)))
              .as("%s: reason of %s", name, job)
              .contains(reason);
        }
        case ReservationCount(var count) ->
            assertThat(pass.reservations()).as("%s: reservations", name).hasSize(count);
        case StartsAt _ -> timeline = true;
      }
    }
    if (timeline) {
      run.harness().commit(pass).runUntilIdle();
      for (var expect : expectations) {
        if (expect instanceof StartsAt(var job, var startSec)) {
          assertThat(run.harness().startOf(run.id(job)))
              .as("%s: start of %s", name, job)
              .hasValue(startSec);
        }
      }
    }
    return run;
  }

  private static String reasonOrNone(PassResult pass, JobId id) {
    return Passes.reason(pass, id).map(Reason::name).orElse("none");
  }

  @Override
  public String toString() {
    return name;
  }
}

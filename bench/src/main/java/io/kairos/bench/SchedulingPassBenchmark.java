package io.kairos.bench;

import io.kairos.core.sched.PassInput;
import io.kairos.core.sched.PassResult;
import io.kairos.core.sched.Policy;
import io.kairos.core.sched.SchedulingPass;
import io.kairos.core.state.ClusterSnapshot;
import io.kairos.core.state.ClusterStore;
import io.kairos.core.tenancy.Tenants;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * One scheduling pass over a large, busy cluster (see {@link BenchCluster} for the state).
 *
 * <ul>
 *   <li>{@code pass}: {@link SchedulingPass#run} on a snapshot taken once in setup. A pass only
 *       reads its snapshot, so every invocation does the same work: order all pending jobs, try
 *       each (no depth limit), start what fits now and compute the reservation(s) of the blocked
 *       head.
 *   <li>{@code snapshot}: {@link ClusterStore#snapshot()} alone (copies of the per-node arrays and
 *       of the pending and running jobs), the other per-pass cost a controller pays.
 * </ul>
 *
 * <p>SampleTime, so JMH reports p50, p90, p99, p99.9 and max per benchmark.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 10, time = 1)
@Fork(
    value = 1,
    jvmArgsAppend = {
      "-Xms4g",
      "-Xmx4g",
      "--sun-misc-unsafe-memory-access=allow",
      "--enable-native-access=ALL-UNNAMED"
    })
public class SchedulingPassBenchmark {
  /** Seed of the cluster state; fixed so every run measures the same state. */
  public static final long STATE_SEED = 20_250_601L;

  /** Seed handed to the pass (tie breaks); fixed. */
  public static final long PASS_SEED = 42L;

  /** The store and a snapshot of it; depends on the scale only. */
  @State(Scope.Benchmark)
  public static class StoreState {
    /** NODESxGPUS/PENDING/RUNNING: racks of 32 nodes, blocks of 8 racks. */
    @Param({"10000x8/100000/20000", "1000x8/10000/2000"})
    public String scale;

    /**
     * {@code none}: single-tenant. {@code 100q}: {@link BenchTenancy}'s 100 queues in 10 cohorts
     * and 1,000 fair-share accounts, quota admission, fair-share order and preemption on.
     */
    @Param({"none", "100q"})
    public String tenancy;

    public ClusterStore store;
    public ClusterSnapshot snapshot;

    @Setup(Level.Trial)
    public void setUp() {
      store =
          BenchCluster.build(BenchCluster.Scale.parse(scale), STATE_SEED, !"none".equals(tenancy));
      snapshot = store.snapshot();
      System.out.println();
      System.out.println("# state " + scale + ": " + BenchCluster.describe(store));
    }
  }

  /** The pass under test for one policy. */
  @State(Scope.Benchmark)
  public static class PassState {
    /** A policy name from {@link Policy#names()}. */
    @Param({"kairos", "easy"})
    public String policy;

    public SchedulingPass pass;
    public PassInput input;

    @Setup(Level.Trial)
    public void setUp(StoreState store) {
      Policy p =
          Policy.byName(policy)
              .orElseThrow(() -> new IllegalArgumentException("no policy " + policy));
      pass = new SchedulingPass(p);
      Tenants tenants =
          "none".equals(store.tenancy)
              ? Tenants.none()
              : BenchTenancy.tenants(store.snapshot.cluster(), BenchCluster.NOW_SEC, STATE_SEED);
      input = new PassInput(store.snapshot, BenchCluster.NOW_SEC, PASS_SEED, tenants);
      PassResult result = pass.run(input);
      System.out.println(
          "# pass "
              + policy
              + ": starts="
              + result.starts().size()
              + " reservations="
              + result.reservations().size()
              + " preemptions="
              + result.preemptions().size()
              + " "
              + result.diagnosis()
              + (result.reservations().isEmpty()
                  ? ""
                  : " firstReservation=" + describe(store, result)));
    }

    private static String describe(StoreState store, PassResult result) {
      var r = result.reservations().getFirst();
      var job = store.store.pending(r.job()).orElseThrow();
      return "job "
          + r.job()
          + " ("
          + job.totalGpus()
          + " GPUs) at now+"
          + (r.startSec() - BenchCluster.NOW_SEC)
          + "s";
    }
  }

  @Benchmark
  public void pass(PassState state, Blackhole bh) {
    bh.consume(state.pass.run(state.input));
  }

  @Benchmark
  public ClusterSnapshot snapshot(StoreState state) {
    return state.store.snapshot();
  }
}

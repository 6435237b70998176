package io.kairos.bench;

import io.kairos.core.sched.PassInput;
import io.kairos.core.sched.PassResult;
import io.kairos.core.sched.Policy;
import io.kairos.core.sched.SchedulingPass;
import io.kairos.core.tenancy.Tenants;
import java.util.Arrays;

/**
 * A scratch main, not a JMH benchmark: builds the pass benchmark's state, prints what it looks like
 * and what a pass decides, then times repeated passes (for profiling under JFR or a sampling
 * profiler without JMH's harness in the way).
 *
 * <pre>
 *   java -cp bench/target/benchmarks.jar io.kairos.bench.PassProbe [scale] [policy] [passes] [none|100q]
 * </pre>
 */
public final class PassProbe {
  private PassProbe() {}

  public static void main(String[] args) {
    String scale = args.length > 0 ? args[0] : "10000x8/100000/20000";
    String policyName = args.length > 1 ? args[1] : "kairos";
    int passes = args.length > 2 ? Integer.parseInt(args[2]) : 50;
    boolean tenancy = args.length > 3 && !"none".equals(args[3]);
    long t0 = System.nanoTime();
    var store =
        BenchCluster.build(
            BenchCluster.Scale.parse(scale), SchedulingPassBenchmark.STATE_SEED, tenancy);
    System.out.printf(
        "state built in %.2f s: %s%n",
        (System.nanoTime() - t0) / 1e9, BenchCluster.describe(store));
    var snapshot = store.snapshot();
    var policy = Policy.byName(policyName).orElseThrow();
    var pass = new SchedulingPass(policy);
    var tenants =
        tenancy
            ? BenchTenancy.tenants(
                snapshot.cluster(), BenchCluster.NOW_SEC, SchedulingPassBenchmark.STATE_SEED)
            : Tenants.none();
    var input =
        new PassInput(snapshot, BenchCluster.NOW_SEC, SchedulingPassBenchmark.PASS_SEED, tenants);
    PassResult result = pass.run(input);
    System.out.println(
        "starts="
            + result.starts().size()
            + " reservations="
            + result.reservations().size()
            + " preemptions="
            + result.preemptions().size()
            + " "
            + result.diagnosis());
    for (var r : result.reservations()) {
      var job = store.pending(r.job()).orElseThrow();
      System.out.println(
          "  reserve job "
              + r.job()
              + " gpus="
              + job.totalGpus()
              + " gang="
              + job.spec().gang()
              + " limit="
              + job.timeLimitSec()
              + " at now+"
              + (r.startSec() - BenchCluster.NOW_SEC)
              + " nodes="
              + r.placement().nodeCount());
    }
    long[] nanos = new long[passes];
    for (int i = 0; i < passes; i++) {
      long s = System.nanoTime();
      pass.run(input);
      nanos[i] = System.nanoTime() - s;
    }
    Arrays.sort(nanos);
    System.out.printf(
        "%s %s: %d passes, min %.2f ms, p50 %.2f ms, max %.2f ms%n",
        scale,
        policyName,
        passes,
        nanos[0] / 1e6,
        nanos[passes / 2] / 1e6,
        nanos[passes - 1] / 1e6);
  }
}

package io.kairos.bench;

import io.kairos.core.model.Cluster;
import io.kairos.core.sched.Policy;
import io.kairos.sim.SimOptions;
import io.kairos.sim.SimReport;
import io.kairos.sim.Simulator;
import io.kairos.sim.trace.Trace;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The whole simulator (EASY, default options) on a 100,000-job synthetic trace ({@link
 * SyntheticTrace}, offered load 0.8) on {@code Cluster.uniform(128, 8, 16, 8)}: 1,024 GPUs in racks
 * of 16 nodes, blocks of 8 racks. One invocation is one full simulation.
 */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3)
@Measurement(iterations = 5)
@Fork(
    value = 1,
    jvmArgsAppend = {
      "-Xms2g",
      "-Xmx2g",
      "--sun-misc-unsafe-memory-access=allow",
      "--enable-native-access=ALL-UNNAMED"
    })
@State(Scope.Benchmark)
public class SimulatorBenchmark {
  public static final int JOBS = 100_000;
  public static final double LOAD = 0.8;
  public static final long SEED = 7L;

  private Cluster cluster;
  private Trace trace;

  @Setup(Level.Trial)
  public void setUp() {
    cluster = Cluster.uniform(128, 8, 16, 8);
    trace = SyntheticTrace.generate(cluster, JOBS, LOAD, SEED);
  }

  @Benchmark
  public SimReport simulate() {
    return new Simulator(cluster, "uniform-128x8", Policy.EASY, SimOptions.defaults()).run(trace);
  }
}

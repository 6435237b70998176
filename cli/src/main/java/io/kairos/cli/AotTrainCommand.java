package io.kairos.cli;

import io.kairos.core.model.Cluster;
import io.kairos.core.sched.Policy;
import io.kairos.sim.SimOptions;
import io.kairos.sim.Simulator;
import io.kairos.sim.trace.EstimateMode;
import io.kairos.sim.trace.TraceReaders;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/**
 * {@code kairos aot-train}: a short, fixed workload for the JVM's ahead-of-time cache (JDK 25,
 * {@code -XX:AOTCacheOutput}). The launcher runs it once after each build so that later runs start
 * with classes loaded and hot methods profiled. Hidden: not for users.
 */
@Command(name = "aot-train", hidden = true, description = "Training run for the JVM AOT cache.")
final class AotTrainCommand implements Callable<Integer> {
  @Override
  public Integer call() {
    try {
      var dir = Files.createTempDirectory("kairos-aot");
      var swf = dir.resolve("train.swf");
      var csv = dir.resolve("train.csv");
      var rng = new SplittableRandom(7);
      var s = new StringBuilder("; synthetic training trace\n");
      var c =
          new StringBuilder(
              "id,submit_s,gpus,duration_s,time_limit_s,user,queue,priority,gpus_per_node\n");
      long submit = 0;
      for (int i = 1; i <= 20_000; i++) {
        submit += rng.nextInt(3000);
        int procs = 1 << rng.nextInt(7);
        long run = 1 + rng.nextInt(20_000);
        long limit = run + rng.nextInt(20_000);
        s.append(i)
            .append(' ')
            .append(submit)
            .append(" -1 ")
            .append(run)
            .append(' ')
            .append(procs)
            .append(" -1 -1 ")
            .append(procs)
            .append(' ')
            .append(limit)
            .append(" -1 1 ")
            .append(1 + rng.nextInt(50))
            .append(" -1 -1 ")
            .append(1 + rng.nextInt(4))
            .append(" -1 -1 -1\n");
        int gpn = procs >= 8 ? 8 : 0;
        c.append(i)
            .append(',')
            .append(submit)
            .append(',')
            .append(procs)
            .append(',')
            .append(run)
            .append(',')
            .append(limit)
            .append(",u,q,0,")
            .append(gpn == 0 ? "" : gpn)
            .append('\n');
      }
      Files.writeString(swf, s);
      Files.writeString(csv, c);
      var swfTrace = TraceReaders.read(swf, "auto", EstimateMode.REQUESTED);
      var csvTrace = TraceReaders.read(csv, "auto", EstimateMode.REQUESTED);
      for (Policy policy : new Policy[] {Policy.EASY, Policy.KAIROS, Policy.FCFS, Policy.SJF}) {
        new Simulator(
                Cluster.uniform(128, 1, 16, 8),
                "128x1",
                policy,
                SimOptions.defaults(),
                System::nanoTime,
                null)
            .run(swfTrace)
            .toMap(true);
        new Simulator(
                Cluster.uniform(32, 8, 16, 8),
                "32x8",
                policy,
                SimOptions.defaults(),
                System::nanoTime,
                null)
            .run(csvTrace)
            .toMap(true);
      }
      Files.delete(swf);
      Files.delete(csv);
      Files.delete(dir);
      return 0;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}

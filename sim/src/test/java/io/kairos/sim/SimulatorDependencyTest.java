package io.kairos.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.core.model.Cluster;
import io.kairos.core.sched.Policy;
import io.kairos.sim.trace.EstimateMode;
import io.kairos.sim.trace.KairosCsvWriter;
import io.kairos.sim.trace.Trace;
import io.kairos.sim.trace.TraceJob;
import io.kairos.sim.trace.TraceReaders;
import java.io.IOException;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Jobs that wait for a preceding job (SWF fields 17 and 18, the CSV's depends_on). */
class SimulatorDependencyTest {
  private static final SimOptions RECORD = new SimOptions(true, Optional.empty(), true, 1, false);

  static TraceJob after(long id, long submit, int gpus, long duration, long preceding, long think) {
    return new TraceJob(
        id, submit, gpus, duration, duration, "", "default", 0, 0, preceding, think);
  }

  /**
   * One node of 8 GPUs. Job 1 (8 GPUs, 100 s) runs 0-100. Job 4 (4 GPUs, 200 s) arrives at 50 and
   * runs 100-300. Job 2 waits for job 1 with 10 s think time: it arrives at 110 (not at its trace
   * time 0) and runs at once on the 4 free GPUs, 110-160. Job 3 waits for job 2 (no think time): it
   * arrives at 160 and needs all 8 GPUs, so it waits for job 4: 300-320. Job 5 names a job that is
   * not in the trace: it arrives at its own time.
   */
  static Trace chain() {
    return SimTestTraces.of(
        SimTestTraces.job(1, 0, 8, 100),
        after(2, 0, 4, 50, 1, 10),
        after(3, 5, 8, 20, 2, 0),
        SimTestTraces.job(4, 50, 4, 200),
        after(5, 400, 1, 10, 99, 0));
  }

  @Test
  void aChainOfThreeJobsArrivesAsEachPrecedingJobEnds() {
    var report =
        new Simulator(Cluster.uniform(1, 8, 1, 1), "1x8", Policy.EASY, RECORD).run(chain());

    SimJobs jobs = report.perJob().orElseThrow();
    assertThat(jobs.traceIds()).containsExactly(1, 2, 3, 4, 5);
    assertThat(jobs.submitSec()).containsExactly(0, 110, 160, 50, 400);
    assertThat(jobs.startSec()).containsExactly(0, 110, 300, 100, 400);
    assertThat(jobs.endSec()).containsExactly(100, 160, 320, 300, 410);
    assertThat(report.jobsWaitedOnDependency()).isEqualTo(2);
    assertThat(report.dependenciesIgnored()).isEqualTo(1);
    assertThat(report.maxWaitSec()).isEqualTo(140); // job 3: arrived 160, started 300
    assertThat(report.makespanSec()).isEqualTo(410);
    assertThat(report.toMap(false))
        .containsEntry("jobs_waited_on_dependency", 2)
        .containsEntry("dependencies_ignored", 1);
    assertThat(report.notes()).anyMatch(n -> n.startsWith("1 jobs name a preceding job"));
  }

  @Test
  void theSameTraceTwiceGivesTheSameReport() {
    var cluster = Cluster.uniform(1, 8, 1, 1);
    for (Policy policy : Policy.ALL) {
      var a = new Simulator(cluster, "1x8", policy, RECORD).run(chain());
      var b = new Simulator(cluster, "1x8", policy, RECORD).run(chain());
      assertThat(a.toMap(false)).as(policy.name()).isEqualTo(b.toMap(false));
      assertThat(a.perJob().orElseThrow().startSec())
          .isEqualTo(b.perJob().orElseThrow().startSec());
    }
  }

  @Test
  void dependenciesSurviveACsvRoundTrip(@TempDir Path dir) throws IOException {
    var out = new StringWriter();
    KairosCsvWriter.write(chain(), out);
    assertThat(out.toString())
        .contains("depends_on,think_s")
        .contains("\n3,5,8,20,20,,default,0,0,2,0\n");
    Path file = dir.resolve("chain.csv");
    Files.writeString(file, out.toString());

    Trace read = TraceReaders.read(file, "auto", EstimateMode.REQUESTED);

    assertThat(read.jobs()).containsExactlyElementsOf(chain().jobs());
  }

  /**
   * None of the shared SWF traces fills field 17 (checked here, so that a new file that does is
   * noticed); the Lublin trace with a chain added on every tenth job shows the effect on a real
   * workload: those jobs arrive later, and the run stays deterministic.
   */
  @Test
  void realSwfTracesCarryNoPrecedingJobsAndAddedOnesDeferArrivals() {
    for (String swf : List.of(SimTestTraces.KTH, SimTestTraces.SDSC, SimTestTraces.LUBLIN)) {
      var trace = SimTestTraces.read(swf, EstimateMode.REQUESTED);
      assertThat(trace.jobs()).as(swf).noneMatch(j -> j.precedingJobId() > 0);
    }
    Trace lublin =
        SimTestTraces.prefix(
            SimTestTraces.read(SimTestTraces.LUBLIN, EstimateMode.REQUESTED), 2_000);
    var chained = new ArrayList<TraceJob>();
    int withPreceding = 0;
    for (int i = 0; i < lublin.jobs().size(); i++) {
      TraceJob j = lublin.jobs().get(i);
      if (i % 10 == 9) {
        j =
            new TraceJob(
                j.id(),
                j.submitSec(),
                j.gpus(),
                j.durationSec(),
                j.timeLimitSec(),
                j.user(),
                j.queue(),
                j.priority(),
                j.gpusPerNode(),
                lublin.jobs().get(i - 1).id(),
                30);
        withPreceding++;
      }
      chained.add(j);
    }
    var trace =
        new Trace(
            lublin.source(),
            lublin.format(),
            chained,
            chained.size(),
            0,
            lublin.estimatesFromRuntime(),
            lublin.notes());
    var cluster = Cluster.uniform(32, 8, 8, 4);

    var plain = new Simulator(cluster, "32x8", Policy.EASY, RECORD).run(lublin);
    var deps = new Simulator(cluster, "32x8", Policy.EASY, RECORD).run(trace);
    var again = new Simulator(cluster, "32x8", Policy.EASY, RECORD).run(trace);

    assertThat(plain.toMap(false)).doesNotContainKey("jobs_waited_on_dependency");
    assertThat(deps.jobsWaitedOnDependency()).isEqualTo(withPreceding);
    assertThat(deps.dependenciesIgnored()).isZero();
    assertThat(deps.toMap(false)).isEqualTo(again.toMap(false));
    var jobs = deps.perJob().orElseThrow();
    for (int i = 9; i < jobs.size(); i += 10) {
      assertThat(jobs.submitSec()[i])
          .as("job %d arrives after its preceding job ends", jobs.traceIds()[i])
          .isEqualTo(jobs.endSec()[i - 1] + 30);
    }
  }
}

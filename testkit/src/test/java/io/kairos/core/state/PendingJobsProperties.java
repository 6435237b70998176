package io.kairos.core.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.core.command.Command;
import io.kairos.core.model.GangSpec;
import io.kairos.core.model.Job;
import io.kairos.core.model.JobId;
import io.kairos.core.model.JobSpec;
import io.kairos.core.model.Placement;
import io.kairos.testkit.Clusters;
import io.kairos.testkit.Properties;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The store's pending jobs under random submits, cancels and starts (enough to grow and compact the
 * pending table): arrival order is kept, ids are found, and a snapshot's parallel arrays describe
 * exactly its jobs, compared with a plain LinkedHashMap model. A snapshot shares the table's
 * arrays: an earlier snapshot nobody released still shows exactly its jobs after any later change
 * (copy on write), and one released ({@link ClusterStore#releaseSnapshot}) lets the table change in
 * place without changing what later snapshots show.
 */
class PendingJobsProperties {
  static LongStream seeds() {
    return LongStream.range(0, Math.min(100, Properties.seeds().count()));
  }

  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void pendingJobsMatchAModel(long seed) {
    Properties.check(
        seed,
        () -> {
          var random = new SplittableRandom(seed);
          var store = new ClusterStore(Clusters.oneRack(1, 64));
          var model = new LinkedHashMap<JobId, Job>();
          var running = new ArrayList<JobId>();
          // Snapshots kept (not released), with the jobs each showed when taken.
          var kept = new ArrayList<Map.Entry<PendingJobs, List<Job>>>();
          long nextId = 1;
          int steps = 200 + random.nextInt(800);
          for (int step = 0; step < steps; step++) {
            int op = random.nextInt(100);
            // Bursts of submissions, then bursts of removals, so the table grows and shrinks.
            boolean submitPhase = (step / 150) % 2 == 0;
            if (model.isEmpty() || (submitPhase ? op < 75 : op < 20)) {
              var spec =
                  new JobSpec(
                      "u",
                      "q",
                      random.nextInt(3),
                      GangSpec.flexible(1 + random.nextInt(2)),
                      1 + random.nextInt(1000),
                      "");
              if (random.nextInt(100) < 10) {
                spec = spec.withExcludedNodes(java.util.Set.of("elsewhere"));
              }
              var job = new Job(JobId.of(nextId++), spec, step, step + random.nextInt(3) * 50L);
              assertThat(Reducer.apply(store, new Command.SubmitJob(step, job)).isAccepted())
                  .isTrue();
              model.put(job.id(), job);
            } else {
              var ids = new ArrayList<>(model.keySet());
              var id = ids.get(random.nextInt(ids.size()));
              var job = model.remove(id);
              if (op % 2 == 0 && store.freeGpus() >= job.totalGpus() && job.isEligibleAt(step)) {
                long mask = lowestFree(store.freeMask(0), job.totalGpus());
                var p = Placement.of(new int[] {0}, new int[] {job.totalGpus()}, new long[] {mask});
                assertThat(Reducer.apply(store, new Command.StartJob(step, id, p)).isAccepted())
                    .isTrue();
                running.add(id);
              } else {
                assertThat(Reducer.apply(store, new Command.CancelJob(step, id, "x")).isAccepted())
                    .isTrue();
              }
              if (running.size() > 20) {
                var done = running.removeFirst();
                assertThat(Reducer.apply(store, new Command.FinishJob(step, done, 0)).isAccepted())
                    .isTrue();
              }
            }
            if (step % 17 == 0 || step == steps - 1) {
              var snapshot = check(store, model);
              if (random.nextBoolean()) {
                store.releaseSnapshot();
              } else {
                kept.add(Map.entry(snapshot, List.copyOf(model.values())));
              }
            }
            if (step % 5 == 0 && random.nextInt(4) == 0) {
              // A snapshot right away, released or kept like the others.
              var snapshot = store.snapshot().pendingJobs();
              if (random.nextBoolean()) {
                store.releaseSnapshot();
              } else {
                kept.add(Map.entry(snapshot, List.copyOf(model.values())));
              }
            }
            for (var k : kept) {
              var p = k.getKey();
              assertThat(p.size()).as("a kept snapshot's size").isEqualTo(k.getValue().size());
              for (int i = 0; i < p.size(); i++) {
                var job = k.getValue().get(i);
                assertThat(p.jobs()[i]).as("a kept snapshot's job %d", i).isEqualTo(job);
                assertThat(p.ids()[i]).isEqualTo(job.id().value());
                assertThat(p.gpus()[i]).isEqualTo(job.totalGpus());
                assertThat(p.eligibleSec()[i]).isEqualTo(job.eligibleSec());
              }
            }
            if (kept.size() > 4) {
              kept.removeFirst();
            }
          }
        });
  }

  private static PendingJobs check(ClusterStore store, LinkedHashMap<JobId, Job> model) {
    assertThat(store.pendingCount()).isEqualTo(model.size());
    assertThat(new ArrayList<>(store.pendingJobs())).containsExactlyElementsOf(model.values());
    for (var id : model.keySet()) {
      assertThat(store.pending(id)).contains(model.get(id));
    }
    var p = store.snapshot().pendingJobs();
    assertThat(p.size()).isEqualTo(model.size());
    var shapes = new java.util.HashMap<Integer, List<Object>>();
    int i = 0;
    for (var job : model.values()) {
      var gang = job.spec().gang();
      var key =
          List.<Object>of(
              gang.shape(),
              gang.distinctNodes(),
              job.spec().gpuModel(),
              job.spec().excludedNodes());
      assertThat(shapes.computeIfAbsent(p.shapeIds()[i], _ -> key))
          .as("jobs with shape id %d share task shape, model and exclusions", p.shapeIds()[i])
          .isEqualTo(key);
      assertThat(p.jobs()[i]).isEqualTo(job);
      assertThat(p.ids()[i]).isEqualTo(job.id().value());
      assertThat(p.eligibleSec()[i]).isEqualTo(job.eligibleSec());
      assertThat(p.limitSec()[i]).isEqualTo(job.timeLimitSec());
      assertThat(p.gpus()[i]).isEqualTo(job.totalGpus());
      assertThat(p.priority()[i]).isEqualTo(job.spec().priority());
      i++;
    }
    return p;
  }

  private static long lowestFree(long free, int count) {
    long taken = 0;
    for (int i = 0; i < count; i++) {
      long bit = Long.lowestOneBit(free & ~taken);
      taken |= bit;
    }
    return taken;
  }
}

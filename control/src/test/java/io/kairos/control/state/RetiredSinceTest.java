package io.kairos.control.state;

import static io.kairos.control.state.LimitsStateTest.limits;
import static io.kairos.control.state.LimitsStateTest.set;
import static io.kairos.control.state.StateFixtures.cancel;
import static io.kairos.control.state.StateFixtures.ended;
import static io.kairos.control.state.StateFixtures.register;
import static io.kairos.control.state.StateFixtures.start;
import static io.kairos.control.state.StateFixtures.submit;
import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.control.raft.CommandCodec;
import io.kairos.control.state.ControlCommand.ForgetJobs;
import io.kairos.protocol.JobState;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * {@link ControlState#retiredSince}: the index by which the accounting writer finds the ended jobs
 * retired since its last write. Whatever the order of submits, starts, ends, cancels (a running job
 * keeps its GPUs until its task stops), forgets and the ended-jobs limit, it holds exactly the
 * {@link ControlState#retiredJobs}, numbered in the order they joined them, and a job that joins
 * after a number is found after it.
 */
class RetiredSinceTest {

  @Test
  void holdsExactlyTheRetiredJobsInTheOrderTheyRetiredWhateverTheCommands() throws Exception {
    for (long seed = 0; seed < 100; seed++) {
      var random = new Random(seed);
      var s = new ControlState();
      assertThat(s.apply(register("n1", 8)).isOk()).isTrue();
      long lastSeen = 0; // the highest number seen so far: later retirements come after it
      for (int step = 0; step < 300; step++) {
        Set<Long> before = ids(s.retiredJobs());
        s.apply(randomCommand(s, random));
        String where = "seed " + seed + ", step " + step;
        var since = s.retiredSince(0);
        assertThat(ids(since.values())).as(where).isEqualTo(ids(s.retiredJobs()));
        // Newly retired jobs are numbered after every number handed out before.
        for (var e : since.entrySet()) {
          if (!before.contains(e.getValue().id)) {
            assertThat(e.getKey()).as(where).isGreaterThan(lastSeen);
          }
        }
        if (!since.isEmpty()) {
          lastSeen = Math.max(lastSeen, since.lastKey());
          long cut = since.firstKey() + random.nextInt(since.size());
          assertThat(s.retiredSince(cut).keySet())
              .as(where)
              .isEqualTo(since.tailMap(cut + 1).keySet());
        }
      }
      // A state loaded from a snapshot numbers its retired jobs afresh, all of them.
      var out = new ByteArrayOutputStream();
      CommandCodec.writeImage(s.image(), out);
      var back =
          ControlState.of(CommandCodec.readImage(new ByteArrayInputStream(out.toByteArray())));
      assertThat(ids(back.retiredSince(0).values()))
          .as("seed %d after a snapshot", seed)
          .isEqualTo(ids(s.retiredJobs()));
    }
  }

  private static ControlCommand randomCommand(ControlState s, Random random) {
    var pending = new ArrayList<JobRecord>();
    for (JobRecord j : s.activeJobs()) {
      if (j.state == JobState.PENDING) {
        pending.add(j);
      }
    }
    List<JobRecord> holding = s.jobsHoldingGpus();
    var retired = new ArrayList<>(s.retiredJobs());
    switch (random.nextInt(7)) {
      case 0, 1 -> {
        return submit(1, 1);
      }
      case 2 -> {
        var used = new HashSet<Integer>();
        holding.forEach(j -> j.placement.forEach(t -> used.addAll(t.gpus())));
        for (int g = 0; g < 8 && !pending.isEmpty(); g++) {
          if (!used.contains(g)) {
            return start(pending.get(random.nextInt(pending.size())).id, "n1", g);
          }
        }
        return submit(1);
      }
      case 3 -> { // a task ends: the job succeeds, or (cancelled) lets go of its GPUs
        if (!holding.isEmpty()) {
          JobRecord j = holding.get(random.nextInt(holding.size()));
          return ended("n1", 1, j.id, j.attempt, 0, random.nextInt(3) == 0 ? 1 : 0);
        }
        return submit(1);
      }
      case 4 -> {
        var live = new ArrayList<>(s.activeJobs());
        return live.isEmpty() ? submit(1) : cancel(live.get(random.nextInt(live.size())).id);
      }
      case 5 -> {
        var ids = new ArrayList<Long>();
        for (JobRecord j : retired) {
          if (random.nextInt(3) == 0) {
            ids.add(j.id);
          }
        }
        return new ForgetJobs(StateFixtures.T0 + 10_000, ids);
      }
      default -> {
        return set(limits(1_000_000, 1_000_000, 5 + random.nextInt(30)));
      }
    }
  }

  private static Set<Long> ids(java.util.Collection<JobRecord> jobs) {
    var out = new TreeSet<Long>();
    jobs.forEach(j -> out.add(j.id));
    return out;
  }
}

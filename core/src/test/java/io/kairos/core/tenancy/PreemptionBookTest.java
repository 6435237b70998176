package io.kairos.core.tenancy;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.core.model.JobId;
import io.kairos.core.sched.preempt.PreemptionHistory;
import io.kairos.core.sched.preempt.ProtectionPolicy;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The preemption rules both drivers keep: a preemption recorded, its victim stopping and stopped,
 * its preemptor starting, an entry expiring {@code 2 x grace + 60 s} after the preemption, and the
 * protection a job earns by being preempted often.
 */
class PreemptionBookTest {
  /** Grace 30 s: an entry may wait 2 x 30 + 60 = 120 s for its preemptor. */
  private static final Tenants.Settings SETTINGS =
      new Tenants.Settings(ProtectionPolicy.DEFAULT, 30, 0, 0);

  private static final JobId VICTIM = JobId.of(1);
  private static final JobId PREEMPTOR = JobId.of(2);
  private static final JobId OTHER_VICTIM = JobId.of(3);

  private final PreemptionBook book = new PreemptionBook(SETTINGS);

  /** What a driver knows of its jobs, set by each test. */
  private static final class FakeJobs implements PreemptionBook.Jobs {
    final Set<JobId> running = new TreeSet<>();
    final Set<JobId> stopping = new TreeSet<>();
    final Set<JobId> waiting = new TreeSet<>();

    @Override
    public boolean running(JobId job) {
      return running.contains(job);
    }

    @Override
    public boolean stopping(JobId job) {
      return stopping.contains(job);
    }

    @Override
    public boolean waiting(JobId job) {
      return waiting.contains(job);
    }

    /** The driver tells {@code victim} to stop (it no longer runs freely). */
    void signal(JobId victim) {
      running.remove(victim);
      stopping.add(victim);
    }

    /** The victim has stopped and waits again. */
    void stop(JobId victim) {
      stopping.remove(victim);
      waiting.add(victim);
    }

    void start(JobId job) {
      waiting.remove(job);
      running.add(job);
    }
  }

  /** Victim 1 runs, preemptor 2 waits; the book has 1 preempted for 2 at t=100. */
  private FakeJobs preemptedAt100() {
    var jobs = new FakeJobs();
    jobs.running.add(VICTIM);
    jobs.waiting.add(PREEMPTOR);
    assertThat(PreemptionBook.applies(VICTIM, PREEMPTOR, jobs)).isTrue();
    jobs.signal(VICTIM);
    book.preempted(VICTIM, PREEMPTOR, 100);
    book.recordHistory(VICTIM, 100);
    return jobs;
  }

  @Test
  void aPreemptionIsRecordedUnderWayAndInTheVictimsHistory() {
    preemptedAt100();

    assertThat(book.preempting()).containsExactly(java.util.Map.entry(VICTIM, PREEMPTOR));
    assertThat(book.histories().get(VICTIM).preemptedAtSec()).containsExactly(100L);
    assertThat(book.keepSec()).isEqualTo(120);
  }

  @Test
  void aStaleDecisionDoesNotApply() {
    var jobs = new FakeJobs();
    jobs.running.add(VICTIM);
    jobs.waiting.add(PREEMPTOR);
    assertThat(PreemptionBook.applies(VICTIM, VICTIM, jobs)).as("itself").isFalse();
    assertThat(PreemptionBook.applies(PREEMPTOR, VICTIM, jobs)).as("victim not running").isFalse();

    jobs.signal(VICTIM);
    assertThat(PreemptionBook.applies(VICTIM, PREEMPTOR, jobs)).as("already stopping").isFalse();

    jobs.running.add(VICTIM);
    jobs.waiting.remove(PREEMPTOR);
    assertThat(PreemptionBook.applies(VICTIM, PREEMPTOR, jobs))
        .as("preemptor no longer waits")
        .isFalse();
  }

  @Test
  void theVictimStopsAndTheEntryStaysUntilThePreemptorStarts() {
    var jobs = preemptedAt100();
    assertThat(book.update(110, jobs)).isEmpty();
    assertThat(book.preempting()).containsKey(VICTIM);

    jobs.stop(VICTIM);
    assertThat(book.update(130, jobs)).isEmpty();
    assertThat(book.preempting()).as("stopped, preemptor still waits").containsKey(VICTIM);

    jobs.start(PREEMPTOR);
    assertThat(book.update(131, jobs)).as("dropped, not expired").isEmpty();
    assertThat(book.preempting()).isEmpty();
    assertThat(book.histories()).as("the history outlives the entry").containsKey(VICTIM);
  }

  @Test
  void aPreemptorThatStartsWhileItsVictimStillStopsKeepsTheEntryUntilTheVictimStops() {
    var jobs = preemptedAt100();
    jobs.start(PREEMPTOR);
    book.update(110, jobs);
    assertThat(book.preempting()).as("the victim still stops").containsKey(VICTIM);

    // Its preemptor started once: even waiting again (requeued meanwhile), it is done with it.
    jobs.waiting.add(PREEMPTOR);
    jobs.stop(VICTIM);
    assertThat(book.update(125, jobs)).isEmpty();
    assertThat(book.preempting()).isEmpty();
  }

  @Test
  void anEntryExpiresTwoGracesAndAMinuteAfterThePreemption() {
    var jobs = preemptedAt100();
    jobs.stop(VICTIM);

    assertThat(book.update(219, jobs)).isEmpty();
    assertThat(book.preempting()).containsKey(VICTIM);

    assertThat(book.update(220, jobs))
        .containsExactly(new PreemptionBook.Entry(VICTIM, PREEMPTOR, 100));
    assertThat(book.preempting()).isEmpty();
    assertThat(book.update(221, jobs)).as("expires once").isEmpty();
  }

  @Test
  void aVictimStillStoppingNeverExpires() {
    var jobs = preemptedAt100();

    assertThat(book.update(10_000, jobs)).isEmpty();
    assertThat(book.preempting()).containsKey(VICTIM);

    jobs.stop(VICTIM);
    assertThat(book.update(10_001, jobs)).hasSize(1);
  }

  @Test
  void expiredEntriesComeInVictimOrder() {
    var jobs = new FakeJobs();
    jobs.waiting.add(PREEMPTOR);
    book.preempted(OTHER_VICTIM, PREEMPTOR, 100);
    book.preempted(VICTIM, PREEMPTOR, 100);

    assertThat(book.update(220, jobs))
        .extracting(PreemptionBook.Entry::victim)
        .containsExactly(VICTIM, OTHER_VICTIM);
  }

  @Test
  void leadershipLostForgetsWhatIsUnderWayButNotHistories() {
    preemptedAt100();

    book.clear();

    assertThat(book.preempting()).isEmpty();
    assertThat(book.histories()).containsKey(VICTIM);
    book.forgetHistory(VICTIM);
    assertThat(book.histories()).isEmpty();
  }

  @Test
  void aJobPreemptedThreeTimesWithinTheWindowIsProtected() {
    for (long t : List.of(100L, 700L, 1_500L)) {
      book.recordHistory(VICTIM, t);
    }
    PreemptionHistory h = book.histories().get(VICTIM);

    // DEFAULT: 3 preemptions within 3,600 s protect for 3,600 s after the last.
    var protection = SETTINGS.protection();
    assertThat(protection.protectedUntilSec(h, 1_600)).isEqualTo(5_100);
    assertThat(protection.isProtected(h, 1_600, 5_099)).isTrue();
    assertThat(protection.isProtected(h, 1_600, 5_100)).isFalse();

    // Two in the window only get the grace after the restart.
    var two = new PreemptionBook(SETTINGS);
    two.recordHistory(VICTIM, 100);
    two.recordHistory(VICTIM, 700);
    assertThat(protection.protectedUntilSec(two.histories().get(VICTIM), 800)).isEqualTo(830);
  }

  @Test
  void foldingKeptTimesGivesTheHistoryRecordedOneByOne() {
    List<Long> times = List.of(10L, 100L, 4_000L, 4_100L, 4_200L, 4_300L);
    for (long t : times) {
      book.recordHistory(VICTIM, t);
    }

    assertThat(book.history(times)).isEqualTo(book.histories().get(VICTIM));
    assertThat(book.history(times).preemptedAtSec()).containsExactly(4_100L, 4_200L, 4_300L);
    // A leader's clock that stepped back: the earlier time counts as the one before it.
    assertThat(book.history(List.of(500L, 400L)).preemptedAtSec()).containsExactly(500L, 500L);
    assertThat(book.history(List.of())).isEqualTo(PreemptionHistory.NONE);
  }
}

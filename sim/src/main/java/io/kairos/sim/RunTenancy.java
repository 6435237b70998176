package io.kairos.sim;

import io.kairos.core.model.JobId;
import io.kairos.core.tenancy.PreemptionBook;
import io.kairos.core.tenancy.Tenants;

/**
 * The tenancy of one run as the {@link EventLoop} sees it: what it is told of each job's events,
 * and what it answers before each pass and for each preemption.
 *
 * <p>Two forms: {@link TenancyBook}, a run measured or scheduled by a tenancy file, and {@link
 * #NONE}, a single-tenant run, which is told everything and does nothing: its pass gets {@link
 * Tenants#none()} and no preemption applies (as the core's {@code TenancyStage.SINGLE_TENANT} does
 * for the pass). So the loop never asks whether there is a tenancy.
 */
sealed interface RunTenancy permits RunTenancy.None, TenancyBook {
  /** No tenancy: a single-tenant run. */
  RunTenancy NONE = new None();

  /** Whether the pass schedules by the tenancy (quotas, fair share, preemption). */
  boolean schedules();

  /** Charges the accounts for what they held until {@code nowSec}. */
  void chargeTo(long nowSec);

  /** Job {@code i}, of {@code gpus} GPUs, arrived and waits. */
  void arrived(int i, int gpus);

  /** Job {@code i}, of {@code gpus} GPUs, started. */
  void started(int i, int gpus);

  /** Job {@code i}, of {@code gpus} GPUs, finished. */
  void finished(int i, int gpus);

  /** Usage and demand were constant from {@code fromSec} to {@code toSec}. */
  void interval(long fromSec, long toSec);

  /**
   * What the pass at {@code nowSec} is told of tenancy, after the preemptions under way are brought
   * up to date with {@code jobs} ({@link PreemptionBook#update}).
   */
  Tenants beforePass(long nowSec, PreemptionBook.Jobs jobs);

  /** Whether a pass's preemption of {@code victim} for {@code preemptor} applies now. */
  boolean applies(JobId victim, JobId preemptor, PreemptionBook.Jobs jobs);

  /** How long a victim runs on after its signal before it stops. */
  long graceSec();

  /** A running job saves its progress every this many seconds of run time (0: never). */
  long checkpointEverySec();

  /** Victim {@code victim} was told at {@code atSec} to stop for {@code preemptor}. */
  void preempted(JobId victim, JobId preemptor, long atSec);

  /**
   * Victim {@code i}, of {@code gpus} GPUs, stopped at the end of its grace and waits again, having
   * lost {@code lostGpuSeconds} of work since its last checkpoint.
   */
  void requeued(int i, int gpus, double lostGpuSeconds);

  /** The neutral form: told everything, does nothing. */
  record None() implements RunTenancy {
    @Override
    public boolean schedules() {
      return false;
    }

    @Override
    public void chargeTo(long nowSec) {}

    @Override
    public void arrived(int i, int gpus) {}

    @Override
    public void started(int i, int gpus) {}

    @Override
    public void finished(int i, int gpus) {}

    @Override
    public void interval(long fromSec, long toSec) {}

    @Override
    public Tenants beforePass(long nowSec, PreemptionBook.Jobs jobs) {
      return Tenants.none();
    }

    @Override
    public boolean applies(JobId victim, JobId preemptor, PreemptionBook.Jobs jobs) {
      return false;
    }

    @Override
    public long graceSec() {
      return 0;
    }

    @Override
    public long checkpointEverySec() {
      return 0;
    }

    @Override
    public void preempted(JobId victim, JobId preemptor, long atSec) {}

    @Override
    public void requeued(int i, int gpus, double lostGpuSeconds) {}
  }
}

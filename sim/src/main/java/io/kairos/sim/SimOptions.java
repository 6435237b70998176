package io.kairos.sim;

import io.kairos.core.sched.place.PlacementStrategy;
import java.util.Optional;

/**
 * How a simulation runs.
 *
 * @param checkInvariants run the invariant checker after every event batch (slower)
 * @param commModel stretch spread gangs' run times, or empty to run them as the trace says
 * @param recordJobs keep each job's start, end and nodes for {@code --jobs-out}
 * @param seed the seed handed to every pass (derived per pass)
 * @param everyPass run a pass after every event batch, even one that provably starts nothing (for
 *     checking that skipping such passes changes no decision)
 * @param placement how gangs' nodes are chosen (topology-aware, or first fit for comparison)
 * @param recordSeries collect time series for charts ({@link SimSeries}, bounded memory)
 * @param tenancy queues with quotas, fair share and preemption, scheduled by or only measured
 *     against; empty for a single-tenant run (the report then has no per-queue part)
 * @param recordPredictions measure predicted start times against real ones ({@link
 *     StartPredictions}; a forecast per event batch while jobs wait, so slower)
 * @param elastic elastic jobs and checkpoint costs ({@link ElasticModel#NONE}: the trace as it is)
 * @param migration move running jobs when it pays ({@code kairos simulate --migration}), or empty:
 *     every running job of a fixed size counts as checkpointable, each move costs {@link
 *     io.kairos.core.sched.MigrationSettings#restartCostSec()} of the gang's time
 */
public record SimOptions(
    boolean checkInvariants,
    Optional<CommModel> commModel,
    boolean recordJobs,
    long seed,
    boolean everyPass,
    PlacementStrategy placement,
    boolean recordSeries,
    Optional<SimTenancy> tenancy,
    boolean recordPredictions,
    ElasticModel elastic,
    Optional<io.kairos.core.sched.MigrationSettings> migration) {
  public SimOptions {
    java.util.Objects.requireNonNull(migration, "migration");
    java.util.Objects.requireNonNull(commModel, "commModel");
    java.util.Objects.requireNonNull(placement, "placement");
    java.util.Objects.requireNonNull(tenancy, "tenancy");
    java.util.Objects.requireNonNull(elastic, "elastic");
  }

  /** Without migration. */
  public SimOptions(
      boolean checkInvariants,
      Optional<CommModel> commModel,
      boolean recordJobs,
      long seed,
      boolean everyPass,
      PlacementStrategy placement,
      boolean recordSeries,
      Optional<SimTenancy> tenancy,
      boolean recordPredictions,
      ElasticModel elastic) {
    this(
        checkInvariants,
        commModel,
        recordJobs,
        seed,
        everyPass,
        placement,
        recordSeries,
        tenancy,
        recordPredictions,
        elastic,
        Optional.empty());
  }

  public SimOptions(
      boolean checkInvariants,
      Optional<CommModel> commModel,
      boolean recordJobs,
      long seed,
      boolean everyPass,
      PlacementStrategy placement,
      boolean recordSeries,
      Optional<SimTenancy> tenancy,
      boolean recordPredictions) {
    this(
        checkInvariants,
        commModel,
        recordJobs,
        seed,
        everyPass,
        placement,
        recordSeries,
        tenancy,
        recordPredictions,
        ElasticModel.NONE);
  }

  public SimOptions(
      boolean checkInvariants,
      Optional<CommModel> commModel,
      boolean recordJobs,
      long seed,
      boolean everyPass,
      PlacementStrategy placement,
      boolean recordSeries,
      Optional<SimTenancy> tenancy) {
    this(
        checkInvariants,
        commModel,
        recordJobs,
        seed,
        everyPass,
        placement,
        recordSeries,
        tenancy,
        false);
  }

  public SimOptions(
      boolean checkInvariants,
      Optional<CommModel> commModel,
      boolean recordJobs,
      long seed,
      boolean everyPass,
      PlacementStrategy placement,
      boolean recordSeries) {
    this(
        checkInvariants,
        commModel,
        recordJobs,
        seed,
        everyPass,
        placement,
        recordSeries,
        Optional.empty());
  }

  public SimOptions(
      boolean checkInvariants,
      Optional<CommModel> commModel,
      boolean recordJobs,
      long seed,
      boolean everyPass,
      PlacementStrategy placement) {
    this(checkInvariants, commModel, recordJobs, seed, everyPass, placement, false);
  }

  public SimOptions(
      boolean checkInvariants,
      Optional<CommModel> commModel,
      boolean recordJobs,
      long seed,
      boolean everyPass) {
    this(checkInvariants, commModel, recordJobs, seed, everyPass, PlacementStrategy.TOPOLOGY);
  }

  /** These options, collecting time series or not. */
  public SimOptions withSeries(boolean record) {
    return new SimOptions(
        checkInvariants,
        commModel,
        recordJobs,
        seed,
        everyPass,
        placement,
        record,
        tenancy,
        recordPredictions,
        elastic,
        migration);
  }

  /** These options, measuring predicted starts or not. */
  public SimOptions withPredictions(boolean record) {
    return new SimOptions(
        checkInvariants,
        commModel,
        recordJobs,
        seed,
        everyPass,
        placement,
        recordSeries,
        tenancy,
        record,
        elastic,
        migration);
  }

  /** These options under a tenancy, or without one. */
  public SimOptions withTenancy(Optional<SimTenancy> value) {
    return new SimOptions(
        checkInvariants,
        commModel,
        recordJobs,
        seed,
        everyPass,
        placement,
        recordSeries,
        value,
        recordPredictions,
        elastic,
        migration);
  }

  /** These options with elastic jobs and checkpoint costs modelled by {@code value}. */
  public SimOptions withElastic(ElasticModel value) {
    return new SimOptions(
        checkInvariants,
        commModel,
        recordJobs,
        seed,
        everyPass,
        placement,
        recordSeries,
        tenancy,
        recordPredictions,
        value,
        migration);
  }

  /** These options moving running jobs when it pays, or not (see {@link #migration}). */
  public SimOptions withMigration(Optional<io.kairos.core.sched.MigrationSettings> value) {
    return new SimOptions(
        checkInvariants,
        commModel,
        recordJobs,
        seed,
        everyPass,
        placement,
        recordSeries,
        tenancy,
        recordPredictions,
        elastic,
        value);
  }

  public static SimOptions defaults() {
    return new SimOptions(false, Optional.empty(), false, 1, false);
  }
}

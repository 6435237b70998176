package io.kairos.core.tenancy;

import io.kairos.core.Checks;
import io.kairos.core.fairshare.FairShareFactor;
import io.kairos.core.model.JobId;
import io.kairos.core.model.JobSpec;
import io.kairos.core.sched.preempt.PreemptionHistory;
import io.kairos.core.sched.preempt.ProtectionPolicy;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What a scheduling pass knows of tenancy: the queues with their quotas and preemption policies,
 * the priority classes, the fair-share factors of the accounts as of the pass, and the state of
 * preemptions (who was preempted when, which preemptions are still under way). Given to the pass in
 * its {@link io.kairos.core.sched.PassInput}; with {@link #none()} the pass is the single-tenant
 * pass of the core (every job admitted, no preemption).
 *
 * <p>The pass recomputes quota usage from the snapshot's running jobs every time, so there is no
 * ledger to keep in step with the store: a value of this class is all the caller carries.
 *
 * <p>Immutable; the maps are copied.
 *
 * @param config queues, cohorts and priority classes
 * @param fairShare the accounts' fair-share factors now, or {@code null} for none (jobs then order
 *     by priority and the policy's key only)
 * @param histories past preemptions per job (for {@link Settings#protection()}); jobs without an
 *     entry were never preempted
 * @param preempting the victims of preemptions under way, each with the pending job it makes room
 *     for. An entry stays while its victim still runs (so a victim is never chosen twice, even when
 *     its preemptor has started meanwhile), and after the victim has stopped until the preemptor
 *     starts (or leaves the queue), but at most {@code 2 x graceSec + 60} s after the preemption,
 *     so that a preemptor that can no longer start does not stop further preemption. While any
 *     entry is present the pass plans no new preemption, puts the waiting preemptors first, counts
 *     running victims as stopping within {@code graceSec} (so the preemptor's reservation falls
 *     then and backfill does not take what they free), and reports the preemptors {@code
 *     PREEMPTING}. Drivers keep these entries, and the histories, by one set of rules: {@link
 *     PreemptionBook}
 * @param settings preemption and starvation settings
 * @param enabled false only for {@link #none()}, which is otherwise empty: no tenancy at all, not a
 *     tenancy of no queues (whose pass admits no job)
 */
public record Tenants(
    TenancyConfig config,
    FairShareFactor fairShare,
    Map<JobId, PreemptionHistory> histories,
    Map<JobId, JobId> preempting,
    Settings settings,
    boolean enabled) {

  private static final Tenants NONE =
      new Tenants(
          new TenancyConfig(List.of(), List.of(), List.of()),
          null,
          Map.of(),
          Map.of(),
          Settings.DEFAULT,
          false);

  public Tenants {
    Objects.requireNonNull(config, "config");
    histories = Map.copyOf(histories);
    preempting = Map.copyOf(preempting);
    Objects.requireNonNull(settings, "settings");
    Checks.argument(
        enabled
            || (config.queues().isEmpty()
                && config.cohorts().isEmpty()
                && config.priorityClasses().isEmpty()
                && fairShare == null
                && histories.isEmpty()
                && preempting.isEmpty()
                && settings.equals(Settings.DEFAULT)),
        () -> "a tenancy that is not enabled is Tenants.none(), with nothing in it");
  }

  /** A tenancy of these values: {@code enabled}. */
  public Tenants(
      TenancyConfig config,
      FairShareFactor fairShare,
      Map<JobId, PreemptionHistory> histories,
      Map<JobId, JobId> preempting,
      Settings settings) {
    this(config, fairShare, histories, preempting, settings, true);
  }

  /**
   * No tenancy: the pass is the single-tenant pass (every job admitted on any GPU model, the
   * policy's order, no preemption). The value a {@link io.kairos.core.sched.PassInput} carries
   * instead of null.
   */
  public static Tenants none() {
    return NONE;
  }

  /** Tenancy with no fair share and no preemption history. */
  public static Tenants of(TenancyConfig config) {
    return new Tenants(config, null, Map.of(), Map.of(), Settings.DEFAULT);
  }

  /** This value with other fair-share factors. */
  public Tenants withFairShare(FairShareFactor factors) {
    return new Tenants(config, factors, histories, preempting, settings, enabled);
  }

  /**
   * Settings of preemption and of the starvation guard for large gangs.
   *
   * @param protection anti-thrashing: how long a job runs before it may be preempted, and the
   *     protection of a job preempted often
   * @param graceSec how long a victim has between its signal and being killed (to checkpoint); the
   *     caller applies it
   * @param starvationMinGpus a gang of at least this many GPUs is "large" (0: the guard is off)
   * @param starvationMaxWaitSec a large gang that has waited this long goes first within its
   *     priority, and so holds the reservation that smaller jobs backfill around but do not delay
   */
  public record Settings(
      ProtectionPolicy protection,
      long graceSec,
      int starvationMinGpus,
      long starvationMaxWaitSec) {
    /**
     * Protection as {@link ProtectionPolicy#DEFAULT}, 30 s grace, large gangs of 64 GPUs or more go
     * first after 6 h.
     */
    public static final Settings DEFAULT =
        new Settings(ProtectionPolicy.DEFAULT, 30, 64, 6 * 3_600);

    public Settings {
      Objects.requireNonNull(protection, "protection");
      Checks.nonNegative(graceSec, "graceSec");
      Checks.nonNegative(starvationMinGpus, "starvationMinGpus");
      Checks.nonNegative(starvationMaxWaitSec, "starvationMaxWaitSec");
    }

    /** Whether the large-gang starvation guard is on. */
    public boolean starvationGuard() {
      return starvationMinGpus > 0;
    }
  }

  /**
   * The account a job is charged to: its own, else its queue's default account, else its user
   * (Slurm's default association). Pure: the controller and the simulator resolve with it.
   */
  public static String accountOf(JobSpec spec, TenancyConfig config) {
    return accountOf(spec.account(), spec.user(), config.queue(spec.queue()).orElse(null));
  }

  /**
   * {@link #accountOf(JobSpec, TenancyConfig)} from the parts: {@code account} if given, else
   * {@code queue}'s default account (null queue: none), else {@code user}.
   */
  public static String accountOf(String account, String user, QueueSpec queue) {
    if (!account.isEmpty()) {
      return account;
    }
    return queue != null && queue.defaults().account() != null ? queue.defaults().account() : user;
  }

  /** The priority class a job runs in: its own, else its queue's default, else none (empty). */
  public static String priorityClassOf(JobSpec spec, TenancyConfig config) {
    if (!spec.priorityClass().isEmpty()) {
      return spec.priorityClass();
    }
    var queue = config.queue(spec.queue());
    if (queue.isPresent() && queue.get().defaults().priorityClass() != null) {
      return queue.get().defaults().priorityClass();
    }
    return "";
  }

  /**
   * A job's spec as submitted, completed from its queue's defaults: the account charged and the
   * priority class, with the class's value as the priority (a job without a class keeps its own
   * priority). Fails with a message naming the field when the queue or class is unknown.
   */
  public static JobSpec resolve(JobSpec spec, TenancyConfig config) {
    if (config.queue(spec.queue()).isEmpty()) {
      throw new IllegalArgumentException(
          "queue: unknown queue '"
              + spec.queue()
              + "' (fix: use one of "
              + config.queues().stream().map(QueueSpec::name).toList()
              + ")");
    }
    String className = priorityClassOf(spec, config);
    int priority = spec.priority();
    if (!className.isEmpty()) {
      PriorityClass pc =
          config
              .priorityClass(className)
              .orElseThrow(
                  () ->
                      new IllegalArgumentException(
                          "priorityClass: unknown priority class '"
                              + className
                              + "' (fix: use one of "
                              + config.priorityClasses().stream().map(PriorityClass::name).toList()
                              + ")"));
      priority = pc.value();
    }
    return spec.withTenancy(accountOf(spec, config), className, priority);
  }

  /** Whether a job may be preempted at all: its class says so; a job without a class may. */
  public boolean preemptible(JobSpec spec) {
    String name = priorityClassOf(spec, config);
    return name.isEmpty()
        || config.priorityClass(name).map(PriorityClass::preemptible).orElse(true);
  }
}

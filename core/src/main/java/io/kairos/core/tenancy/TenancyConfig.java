package io.kairos.core.tenancy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * The whole multi-tenancy configuration: priority classes, cohorts and queues. The constructor
 * checks every rule and reports every problem at once, one per line, each naming its key path and
 * the fix, e.g. {@code queues[research].quotas[gpu:H100].nominal: must be >= 0, got -2 (fix: ...)}.
 * A value of this type is therefore always consistent; {@link QuotaLedger} trusts it.
 *
 * <p>Rules:
 *
 * <ol>
 *   <li>names are non-blank and unique within priority classes, cohorts and queues;
 *   <li>a queue's cohort is declared under {@code cohorts};
 *   <li>a queue names at least one resource; nominal, borrowing and lending limits are {@code >=
 *       0}; a lending limit is at most the nominal quota;
 *   <li>a borrowing or lending limit, or preemption within the cohort, needs a cohort;
 *   <li>{@code borrowWithinCohort} other than NEVER needs {@code reclaimWithinCohort} other than
 *       NEVER (as Kueue), and a {@code maxPriorityThreshold} needs LOWER_PRIORITY;
 *   <li>a default priority class is declared; a default account is non-blank;
 *   <li>a cohort's nominal quotas of one resource sum to at most {@code Long.MAX_VALUE}.
 * </ol>
 *
 * <p>Lists keep their given order, which is the order of queues in the ledger and in its outputs.
 */
public record TenancyConfig(
    List<PriorityClass> priorityClasses, List<CohortSpec> cohorts, List<QueueSpec> queues) {

  public TenancyConfig {
    priorityClasses = List.copyOf(priorityClasses);
    cohorts = List.copyOf(cohorts);
    queues = List.copyOf(queues);
    List<String> problems = problems(priorityClasses, cohorts, queues);
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException(
          "invalid tenancy configuration ("
              + problems.size()
              + "):\n"
              + String.join("\n", problems));
    }
  }

  /** Queues only: no priority classes, cohorts declared from the queues' cohort names. */
  public static TenancyConfig ofQueues(List<QueueSpec> queues) {
    var names = new LinkedHashSet<String>();
    for (QueueSpec q : queues) {
      if (q.cohort() != null) {
        names.add(q.cohort());
      }
    }
    return new TenancyConfig(List.of(), names.stream().map(CohortSpec::new).toList(), queues);
  }

  public Optional<QueueSpec> queue(String name) {
    return queues.stream().filter(q -> q.name().equals(name)).findFirst();
  }

  public Optional<PriorityClass> priorityClass(String name) {
    return priorityClasses.stream().filter(p -> p.name().equals(name)).findFirst();
  }

  /** The queues of a cohort, in configuration order. */
  public List<QueueSpec> members(String cohort) {
    return queues.stream().filter(q -> cohort.equals(q.cohort())).toList();
  }

  private static List<String> problems(
      List<PriorityClass> priorityClasses, List<CohortSpec> cohorts, List<QueueSpec> queues) {
    var problems = new ArrayList<String>();

    // 1. Names.
    var classNames = new HashSet<String>();
    for (int i = 0; i < priorityClasses.size(); i++) {
      String name = priorityClasses.get(i).name();
      if (name.isBlank()) {
        problems.add("priorityClasses[#" + i + "].name: must not be blank (fix: name it)");
      } else if (!classNames.add(name)) {
        problems.add(
            "priorityClasses[" + name + "]: duplicate name (fix: rename one or remove it)");
      }
    }
    var cohortNames = new HashSet<String>();
    for (int i = 0; i < cohorts.size(); i++) {
      String name = cohorts.get(i).name();
      if (name.isBlank()) {
        problems.add("cohorts[#" + i + "].name: must not be blank (fix: name it)");
      } else if (!cohortNames.add(name)) {
        problems.add("cohorts[" + name + "]: duplicate name (fix: rename one or remove it)");
      }
    }
    var queueNames = new HashSet<String>();
    for (int i = 0; i < queues.size(); i++) {
      String name = queues.get(i).name();
      if (name.isBlank()) {
        problems.add("queues[#" + i + "].name: must not be blank (fix: name it)");
      } else if (!queueNames.add(name)) {
        problems.add("queues[" + name + "]: duplicate name (fix: rename one or merge them)");
      }
    }

    // 2-6. Each queue on its own.
    for (int i = 0; i < queues.size(); i++) {
      QueueSpec q = queues.get(i);
      String path = q.name().isBlank() ? "queues[#" + i + "]" : "queues[" + q.name() + "]";
      queueProblems(q, path, cohortNames, classNames, problems);
    }

    // 7. Cohort sums fit in a long (the ledger adds them up).
    Map<String, Map<Resource, Long>> sums = new HashMap<>();
    for (QueueSpec q : queues) {
      if (q.cohort() == null) {
        continue;
      }
      var perResource = sums.computeIfAbsent(q.cohort(), _ -> new TreeMap<>());
      for (var e : q.quotas().entrySet()) {
        long nominal = Math.max(0, e.getValue().nominal());
        long sum = perResource.getOrDefault(e.getKey(), 0L);
        if (sum > Long.MAX_VALUE - nominal) {
          problems.add(
              "cohorts["
                  + q.cohort()
                  + "]: nominal quotas of "
                  + e.getKey()
                  + " sum past "
                  + Long.MAX_VALUE
                  + " (fix: lower them)");
          perResource.put(e.getKey(), 0L);
        } else {
          perResource.put(e.getKey(), sum + nominal);
        }
      }
    }
    return problems;
  }

  private static void queueProblems(
      QueueSpec q,
      String path,
      Set<String> cohortNames,
      Set<String> classNames,
      List<String> problems) {
    boolean hasCohort = q.cohort() != null;
    if (hasCohort && !cohortNames.contains(q.cohort())) {
      problems.add(
          path
              + ".cohort: unknown cohort '"
              + q.cohort()
              + "' (fix: declare it under cohorts, or correct the name)");
    }
    if (q.quotas().isEmpty()) {
      problems.add(
          path
              + ".quotas: must name at least one resource (fix: add e.g. gpu:H100 with a nominal"
              + " quota, 0 if the queue should only borrow)");
    }
    // Sorted, so problems come out in the same order on every run.
    for (var e : new TreeMap<>(q.quotas()).entrySet()) {
      String qp = path + ".quotas[" + e.getKey() + "]";
      ResourceQuota quota = e.getValue();
      if (quota.nominal() < 0) {
        problems.add(
            qp + ".nominal: must be >= 0, got " + quota.nominal() + " (fix: use 0 or more)");
      }
      Long borrowing = quota.borrowingLimit();
      if (borrowing != null) {
        if (borrowing < 0) {
          problems.add(
              qp
                  + ".borrowingLimit: must be >= 0, got "
                  + borrowing
                  + " (fix: use 0 to forbid borrowing, or remove it for no limit)");
        }
        if (!hasCohort) {
          problems.add(
              qp
                  + ".borrowingLimit: set on a queue without a cohort, which cannot borrow"
                  + " (fix: set "
                  + path
                  + ".cohort, or remove the limit)");
        }
      }
      Long lending = quota.lendingLimit();
      if (lending != null) {
        if (lending < 0) {
          problems.add(
              qp
                  + ".lendingLimit: must be >= 0, got "
                  + lending
                  + " (fix: use 0 to lend nothing, or remove it to lend all unused quota)");
        } else if (lending > quota.nominal() && quota.nominal() >= 0) {
          problems.add(
              qp
                  + ".lendingLimit: must be <= nominal "
                  + quota.nominal()
                  + ", got "
                  + lending
                  + " (fix: lower it to at most "
                  + quota.nominal()
                  + ", or remove it to lend all unused quota)");
        }
        if (!hasCohort) {
          problems.add(
              qp
                  + ".lendingLimit: set on a queue without a cohort, which cannot lend"
                  + " (fix: set "
                  + path
                  + ".cohort, or remove the limit)");
        }
      }
    }

    PreemptionPolicy p = q.preemption();
    if (!hasCohort && p.reclaimWithinCohort() != PreemptionPolicy.ReclaimWithinCohort.NEVER) {
      problems.add(
          path
              + ".preemption.reclaimWithinCohort: "
              + p.reclaimWithinCohort()
              + " on a queue without a cohort (fix: set "
              + path
              + ".cohort, or use NEVER)");
    }
    var borrow = p.borrowWithinCohort();
    if (borrow.policy() != PreemptionPolicy.BorrowWithinCohort.Policy.NEVER) {
      if (!hasCohort) {
        problems.add(
            path
                + ".preemption.borrowWithinCohort.policy: "
                + borrow.policy()
                + " on a queue without a cohort (fix: set "
                + path
                + ".cohort, or use NEVER)");
      }
      if (p.reclaimWithinCohort() == PreemptionPolicy.ReclaimWithinCohort.NEVER) {
        problems.add(
            path
                + ".preemption.borrowWithinCohort.policy: "
                + borrow.policy()
                + " needs reclaimWithinCohort other than NEVER (fix: set reclaimWithinCohort to"
                + " LOWER_PRIORITY or ANY, or borrowWithinCohort to NEVER)");
      }
    } else if (borrow.maxPriorityThreshold() != null) {
      problems.add(
          path
              + ".preemption.borrowWithinCohort.maxPriorityThreshold: set while the policy is NEVER"
              + " (fix: set the policy to LOWER_PRIORITY, or remove the threshold)");
    }

    QueueDefaults d = q.defaults();
    if (d.account() != null && d.account().isBlank()) {
      problems.add(
          path + ".defaults.account: must not be blank (fix: name an account, or remove it)");
    }
    if (d.priorityClass() != null && !classNames.contains(d.priorityClass())) {
      problems.add(
          path
              + ".defaults.priorityClass: unknown priority class '"
              + d.priorityClass()
              + "' (fix: declare it under priorityClasses, or correct the name)");
    }
  }
}

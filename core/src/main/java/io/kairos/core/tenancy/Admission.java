package io.kairos.core.tenancy;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The ledger's answer to "may this request be admitted to this queue now". A value, not an
 * exception: not fitting is an ordinary outcome.
 */
public sealed interface Admission {
  /** Whether the request may be admitted (within nominal quota or by borrowing). */
  boolean admits();

  /** Fits within the queue's nominal quota for every resource: borrows nothing. */
  record Fits() implements Admission {
    public static final Fits INSTANCE = new Fits();

    @Override
    public boolean admits() {
      return true;
    }
  }

  /**
   * Fits, but only by borrowing unused quota of other queues in the cohort.
   *
   * @param borrowed per resource that goes above nominal quota, the amount above it that this
   *     request adds (only resources with a positive amount, in resource order)
   */
  record Borrows(Map<Resource, Long> borrowed) implements Admission {
    public Borrows {
      borrowed = Collections.unmodifiableMap(new TreeMap<>(borrowed));
    }

    @Override
    public boolean admits() {
      return true;
    }
  }

  /**
   * Does not fit: the first resource (in resource order) that lacks quota, with the numbers.
   *
   * @param resource the resource that lacks quota
   * @param needed what the request asks of it
   * @param available what the queue could use now: its unused nominal quota it can reach, plus what
   *     the cohort lends it within its borrowing limit
   * @param reclaimable how much of the queue's unused nominal quota other queues are borrowing:
   *     what reclaim preemption could give back ({@link QuotaLedger#reclaimable})
   * @param reason for people, e.g. {@code gpu:H100: queue research uses 6 of nominal 8, cohort
   *     lends 1, job needs 4}
   */
  record DoesNotFit(Resource resource, long needed, long available, long reclaimable, String reason)
      implements Admission {
    public DoesNotFit {
      Objects.requireNonNull(resource, "resource");
      Objects.requireNonNull(reason, "reason");
    }

    @Override
    public boolean admits() {
      return false;
    }
  }
}

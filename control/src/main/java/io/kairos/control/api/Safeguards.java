package io.kairos.control.api;

import io.kairos.config.Tenancy;
import io.kairos.control.auth.Principal;
import io.kairos.control.auth.PrivateData;
import io.kairos.control.state.ControlState;
import io.kairos.control.state.JobRequest;
import io.kairos.control.state.Limits;
import io.kairos.core.fairshare.AccountTree;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * What keeps one user from reading another's private data or starving the controller, as the API
 * applies it: the {@link PrivateData} level, each user's submit rate, and the heap requests in
 * flight may take. The limits themselves are replicated ({@link ControlState#limits}); until the
 * leader has set them, this replica's heap defaults ({@link Limits#forHeap}) stand in for the rate
 * and size checks.
 */
public final class Safeguards {
  private final PrivateData privateData;
  private final AccountTree accounts;
  private final long maxHeapBytes;
  private final Limits heapDefaults;
  private final SubmitRate rate;
  private final RequestBudget budget;

  /**
   * @param maxHeapBytes the heap this JVM may grow to ({@code Runtime.maxMemory()})
   * @param nanos a monotonic clock for the submit rate ({@code System::nanoTime})
   */
  public Safeguards(
      PrivateData privateData, Optional<Tenancy> tenancy, long maxHeapBytes, LongSupplier nanos) {
    this.privateData = privateData;
    this.accounts = tenancy.filter(Tenancy::hasAccounts).map(Tenancy::accounts).orElse(null);
    this.maxHeapBytes = maxHeapBytes;
    this.heapDefaults = Limits.forHeap(maxHeapBytes);
    this.rate = new SubmitRate(nanos);
    this.budget = new RequestBudget(maxHeapBytes / 8);
  }

  /** This JVM's heap and the OWNER level: what a controller without settings gets. */
  public static Safeguards defaults(PrivateData privateData, Optional<Tenancy> tenancy) {
    return new Safeguards(privateData, tenancy, Runtime.getRuntime().maxMemory(), System::nanoTime);
  }

  public PrivateData privateData() {
    return privateData;
  }

  /** Whether {@code who} may read the private data of the job {@code r} describes. */
  public boolean mayRead(Principal who, JobRequest r) {
    return privateData.mayRead(who, r.user(), r.account(), accounts);
  }

  /**
   * Whose accounting records {@code who} may read: all for an admin or with {@code --private-data
   * all}; else their own, and with {@code account} also those charged to the accounts they are a
   * member of (their own node of the account tree and every one above it).
   */
  public io.kairos.control.accounting.Visibility visibility(Principal who) {
    if (who.isAdmin() || privateData == PrivateData.ALL) {
      return io.kairos.control.accounting.Visibility.everyone();
    }
    var above = new java.util.ArrayList<String>();
    if (privateData == PrivateData.ACCOUNT && accounts != null && accounts.contains(who.user())) {
      for (int id = accounts.id(who.user());
          id != io.kairos.core.fairshare.AccountTree.NO_PARENT;
          id = accounts.parent(id)) {
        above.add(accounts.name(id));
      }
    }
    return io.kairos.control.accounting.Visibility.own(who.user(), above);
  }

  public long maxHeapBytes() {
    return maxHeapBytes;
  }

  /** The defaults this replica's heap gives (what the leader proposes when none are set). */
  public Limits heapDefaults() {
    return heapDefaults;
  }

  /** The limits in force in {@code state}, or this replica's defaults until they are set. */
  Limits limits(ControlState state) {
    return state.limits().orElse(heapDefaults);
  }

  SubmitRate rate() {
    return rate;
  }

  RequestBudget budget() {
    return budget;
  }
}

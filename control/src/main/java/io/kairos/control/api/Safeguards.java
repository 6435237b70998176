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
import java.util.function.Supplier;

/**
 * What keeps one user from reading another's private data or starving the controller, as the API
 * applies it: the {@link PrivateData} level, each user's submit rate, and the heap requests in
 * flight may take. The limits themselves are replicated ({@link ControlState#limits}); until the
 * leader has set them, this replica's heap defaults ({@link Limits#forHeap}) stand in for the rate
 * and size checks.
 */
public final class Safeguards {
  private final PrivateData privateData;
  private final Supplier<Optional<Tenancy>> tenancy;
  private final long maxHeapBytes;
  private final Limits heapDefaults;
  private final SubmitRate rate;
  private final RequestBudget budget;
  private final LoadShedder shedder;

  /**
   * @param maxHeapBytes the heap this JVM may grow to ({@code Runtime.maxMemory()})
   * @param nanos a monotonic clock for the submit rate ({@code System::nanoTime})
   * @param tenancy the tenancy in force now (it changes with {@code kairos config apply}): its
   *     account tree widens {@link PrivateData#ACCOUNT}
   */
  public Safeguards(
      PrivateData privateData,
      Supplier<Optional<Tenancy>> tenancy,
      long maxHeapBytes,
      LongSupplier nanos) {
    this(privateData, tenancy, maxHeapBytes, nanos, LoadShedder.DEFAULT_MAX_IN_FLIGHT);
  }

  /**
   * @param maxSubmitsInFlight submit requests served at once; more are shed ({@link LoadShedder})
   */
  public Safeguards(
      PrivateData privateData,
      Supplier<Optional<Tenancy>> tenancy,
      long maxHeapBytes,
      LongSupplier nanos,
      int maxSubmitsInFlight) {
    this.privateData = privateData;
    this.tenancy = tenancy;
    this.maxHeapBytes = maxHeapBytes;
    this.heapDefaults = Limits.forHeap(maxHeapBytes);
    this.rate = new SubmitRate(nanos);
    this.budget = new RequestBudget(maxHeapBytes / 8);
    this.shedder = new LoadShedder(maxSubmitsInFlight);
  }

  /** The system property that bounds submits in flight ({@link LoadShedder}). */
  public static final String MAX_SUBMITS_IN_FLIGHT = "kairos.maxSubmitsInFlight";

  /**
   * This JVM's heap, the OWNER level and the bound on submits in flight ({@value
   * #MAX_SUBMITS_IN_FLIGHT}, default {@value LoadShedder#DEFAULT_MAX_IN_FLIGHT}): what a controller
   * without settings gets.
   */
  public static Safeguards defaults(PrivateData privateData, Supplier<Optional<Tenancy>> tenancy) {
    return new Safeguards(
        privateData,
        tenancy,
        Runtime.getRuntime().maxMemory(),
        System::nanoTime,
        Integer.getInteger(MAX_SUBMITS_IN_FLIGHT, LoadShedder.DEFAULT_MAX_IN_FLIGHT));
  }

  public PrivateData privateData() {
    return privateData;
  }

  /** Whether {@code who} may read the private data of the job {@code r} describes. */
  public boolean mayRead(Principal who, JobRequest r) {
    AccountTree accounts =
        tenancy.get().filter(Tenancy::hasAccounts).map(Tenancy::accounts).orElse(null);
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
    AccountTree accounts =
        tenancy.get().filter(Tenancy::hasAccounts).map(Tenancy::accounts).orElse(null);
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

  /** The bound on submits in flight. */
  public LoadShedder shedder() {
    return shedder;
  }
}

package io.kairos.control.sched;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.kairos.config.Tenancy;
import io.kairos.control.state.ControlCommand;
import io.kairos.control.state.ControlCommand.RegisterNode;
import io.kairos.control.state.ControlCommand.Start;
import io.kairos.control.state.ControlCommand.StartJobs;
import io.kairos.control.state.ControlCommand.SubmitJobs;
import io.kairos.control.state.ControlCommand.TaskEnded;
import io.kairos.control.state.ControlState;
import io.kairos.control.state.JobRequest;
import io.kairos.core.fairshare.AccountTree;
import io.kairos.core.fairshare.Resource;
import io.kairos.core.fairshare.Resources;
import io.kairos.core.tenancy.QueueSpec;
import io.kairos.core.tenancy.ResourceQuota;
import io.kairos.core.tenancy.TenancyConfig;
import io.kairos.core.tenancy.Tenants;
import io.kairos.protocol.GpuDevice;
import io.kairos.protocol.TaskPlacement;
import io.kairos.protocol.agent.Registration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The leader's fair-share usage: running jobs are charged up to each update, ended jobs up to their
 * end, jobs of accounts outside the tree not at all, and charging pass by pass gives the same usage
 * as a rebuild from the records at the same time.
 */
class FairShareUsageTest {
  static final long T0 = 1_700_000_000_000L;
  static final long HOUR = 3_600;
  static final long DAY_SEC = 86_400;
  static final Resources CAPACITY = new Resources(8, 64, 512L << 30);

  static Tenancy setup() {
    var config =
        TenancyConfig.ofQueues(
            List.of(
                QueueSpec.of(
                    "q",
                    null,
                    Map.of(io.kairos.core.tenancy.Resource.gpu("H100"), ResourceQuota.of(8)))));
    var tree =
        AccountTree.of(
            List.of(
                new AccountTree.Account("a", "root", 1), new AccountTree.Account("b", "root", 1)));
    return new Tenancy(config, tree, DAY_SEC, Tenants.Settings.DEFAULT);
  }

  static JobRequest job(int gpus, String account) {
    return new JobRequest(
            "j", List.of("sleep", "60"), Map.of(), "", gpus, 0, 0, 0, 3600, "q", 0, "", "alice")
        .withTenancy(account, "", 0);
  }

  static ControlState state() {
    var devices = new ArrayList<GpuDevice>();
    for (int i = 0; i < 8; i++) {
      devices.add(new GpuDevice(i, "GPU-n1-" + i, "H100", 80L << 30));
    }
    var s = new ControlState();
    apply(
        s,
        new RegisterNode(
            T0,
            new Registration(
                "n1", "http://127.0.0.1:1", devices, 64, 512L << 30, Map.of(), "z", "b", "r", 8)));
    apply(s, new SubmitJobs(T0, List.of(job(4, "a"), job(4, "b"), job(4, "nobody"))));
    return s;
  }

  static void apply(ControlState s, ControlCommand c) {
    assertThat(s.apply(c).status()).as("%s", c).isLessThan(300);
  }

  static StartJobs start(long jobId, long atMs, int... gpus) {
    var list = new ArrayList<Integer>();
    for (int g : gpus) {
      list.add(g);
    }
    return new StartJobs(
        atMs, List.of(new Start(jobId, List.of(new TaskPlacement(0, "n1", list)))));
  }

  static long sec(long ms) {
    return ms / 1000;
  }

  @Test
  void chargesRunningJobsUpToNowAndEndedJobsUpToTheirEnd() {
    var s = state();
    apply(s, start(1, T0, 0, 1, 2, 3)); // account a, 4 GPUs
    var usage = new FairShareUsage(setup());
    long t1 = sec(T0) + HOUR;
    var factors = usage.update(s, CAPACITY, t1);
    double decay = Math.pow(0.5, 1.0 / 24); // one hour of a one-day half-life
    // 4 GPUs for an hour, decayed continuously: between the undecayed and the fully decayed sum.
    assertThat(usage.tracker().usage("a", Resource.GPU)).isBetween(4.0 * HOUR * decay, 4.0 * HOUR);
    assertThat(usage.tracker().usage("b", Resource.GPU)).isZero();
    assertThat(factors.factor("b")).isGreaterThan(factors.factor("a"));

    // b starts; a's job ends half an hour later; a later update charges a only to its end.
    apply(s, start(2, T0 + HOUR * 1000, 4, 5, 6, 7));
    usage.update(s, CAPACITY, t1 + 60);
    long endMs = T0 + (HOUR + HOUR / 2) * 1000;
    apply(s, new TaskEnded(endMs, "n1", 1, 1, 1, 0, 0, null, null));
    long t2 = sec(T0) + 3 * HOUR;
    usage.update(s, CAPACITY, t2);
    double a = usage.tracker().usage("a", Resource.GPU);
    double b = usage.tracker().usage("b", Resource.GPU);
    // a held 4 GPUs for 1.5 h, b 4 GPUs for 2 h, both decayed to t2: b > a, and a is below an
    // undecayed 1.5 h.
    assertThat(a)
        .isLessThan(4.0 * 1.5 * HOUR)
        .isGreaterThan(4.0 * 1.5 * HOUR * Math.pow(0.5, 3.0 / 24));
    assertThat(b).isGreaterThan(a);

    // Incremental charging equals a rebuild from the records at the same time.
    var rebuilt = new FairShareUsage(setup());
    rebuilt.update(s, CAPACITY, t2);
    assertThat(rebuilt.tracker().usage("a", Resource.GPU)).isCloseTo(a, within(a * 1e-9));
    assertThat(rebuilt.tracker().usage("b", Resource.GPU)).isCloseTo(b, within(b * 1e-9));
  }

  @Test
  void aNewLeaderRebuildsEndedJobsUseFromTheAccountingStoreAfterTheStateForgotThem(
      @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
    var s = state();
    apply(s, start(1, T0, 0, 1, 2, 3)); // account a, 4 GPUs
    long endMs = T0 + HOUR * 1000;
    apply(s, new TaskEnded(endMs, "n1", 1, 1, 1, 0, 0, null, null));
    long now = sec(T0) + 3 * HOUR;
    var before = new FairShareUsage(setup());
    before.update(s, CAPACITY, now);
    double a = before.tracker().usage("a", Resource.GPU);
    assertThat(a).isPositive();

    // The job is written to the store, then leaves the state.
    try (var store =
        io.kairos.control.accounting.AccountingStore.open(
            io.kairos.control.accounting.AccountingSettings.defaults(), dir)) {
      var job = s.job(1).orElseThrow();
      store.write(
          List.of(
              io.kairos.control.accounting.AccountedJob.of(
                  job, node -> s.node(node).orElseThrow().registration.gpus())));
      apply(s, new io.kairos.control.state.ControlCommand.ForgetJobs(endMs + 1, List.of(1L)));
      assertThat(s.job(1)).isEmpty();

      var fromRecords = new FairShareUsage(setup());
      fromRecords.update(s, CAPACITY, now);
      assertThat(fromRecords.tracker().usage("a", Resource.GPU))
          .as("without the store the forgotten job's use is lost")
          .isZero();

      var queries = new io.kairos.control.accounting.AccountingQueries(store);
      var fromStore = new FairShareUsage(setup());
      fromStore.useHistory(queries::usageBuckets);
      fromStore.update(s, CAPACITY, now);
      // Charged in hour buckets: within a few percent of the exact charge (one-day half-life).
      assertThat(fromStore.tracker().usage("a", Resource.GPU)).isCloseTo(a, within(a * 0.05));
      assertThat(fromStore.tracker().usage("b", Resource.GPU)).isZero();
    }
  }

  @Test
  void accountsOutsideTheTreeAreChargedToNobody() {
    var s = state();
    apply(s, start(3, T0, 0, 1, 2, 3)); // account "nobody"
    var usage = new FairShareUsage(setup());
    usage.update(s, CAPACITY, sec(T0) + HOUR);
    assertThat(usage.tracker().totalUsage(Resource.GPU)).isZero();
  }

  @Test
  void noAccountsNoFactors() {
    var config = setup().config();
    var none = new Tenancy(config, AccountTree.of(List.of()), DAY_SEC, Tenants.Settings.DEFAULT);
    assertThat(new FairShareUsage(none).update(state(), CAPACITY, sec(T0))).isNull();
  }
}

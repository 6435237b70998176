package io.kairos.core.sched;

import io.kairos.core.fairshare.AccountTree;
import io.kairos.core.state.PendingJobs.TenantKey;
import io.kairos.core.tenancy.QuotaLedger;
import io.kairos.core.tenancy.TenancyConfig;
import io.kairos.core.tenancy.Tenants;
import java.util.Arrays;
import java.util.HashMap;

/**
 * Per interned tenant key (queue, account, priority class, user) of the pending table: the queue's
 * ledger id and the account's id in the fair-share tree, memoised across passes.
 *
 * <p>Design note. The keys are interned once at submission and never change, so what they map to
 * depends only on the configuration and the tree: resolving the few new keys of each pass, instead
 * of every key (two hash lookups each, on strings spread over the heap), took a third of the
 * tenancy stage's set-up at 100,000 pending jobs. The memo is pure data derived from its inputs
 * (the same input gives the same ids), so a pass that uses it stays a function of its input. It
 * starts over when the configuration, the tree or the keys array (the pending table's, replaced
 * when it grows) is another object. Thread-safe.
 */
final class TenantIndex {
  private TenancyConfig config;
  private AccountTree tree;
  private TenantKey[] keys;
  private int[] queue = new int[0];
  private int[] account = new int[0];
  private int count;

  /**
   * Ids for keys {@code [0, needed)}: {@code out[0]} queue ids (-1 unknown), {@code out[1]} account
   * ids (-1 unknown or no tree).
   */
  synchronized int[][] resolve(
      TenancyConfig config, QuotaLedger quota, AccountTree tree, TenantKey[] keys, int needed) {
    if (config != this.config || tree != this.tree || keys != this.keys) {
      this.config = config;
      this.tree = tree;
      this.keys = keys;
      count = 0;
    }
    if (needed > queue.length) {
      int capacity = Math.max(needed, queue.length * 2);
      queue = Arrays.copyOf(queue, capacity);
      account = Arrays.copyOf(account, capacity);
    }
    if (count < needed) {
      var queueIds = new HashMap<String, Integer>();
      for (int t = count; t < needed; t++) {
        TenantKey key = keys[t];
        int q = key == null ? -1 : queueIds.computeIfAbsent(key.queue(), quota::queueId);
        queue[t] = q;
        account[t] = key == null || tree == null ? -1 : accountId(key, q, config, tree);
      }
      count = needed;
    }
    return new int[][] {queue, account};
  }

  private static int accountId(TenantKey key, int q, TenancyConfig config, AccountTree tree) {
    String name =
        Tenants.accountOf(key.account(), key.user(), q >= 0 ? config.queues().get(q) : null);
    return tree.contains(name) ? tree.id(name) : -1;
  }
}

package io.kairos.control.accounting;

import io.kairos.control.raft.RaftReplica;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;

/**
 * A replica's accounting: its store, the queries over it and the writer that fills it. Opened
 * before the replica starts (the embedded store must hear of every job the state forgets), started
 * once it runs.
 */
public final class Accounting implements Closeable {
  /** How often the writer looks for ended jobs. */
  public static final Duration TICK = Duration.ofMillis(500);

  private final AccountingSettings settings;
  private final AccountingStore store;
  private final AccountingQueries queries;
  private final AccountingWriter writer;

  private Accounting(AccountingSettings settings, AccountingStore store, AccountingWriter writer) {
    this.settings = settings;
    this.store = store;
    this.queries = new AccountingQueries(store);
    this.writer = writer;
  }

  /**
   * Opens the store and hooks it into {@code replica}'s state machine; call before the replica
   * starts.
   */
  public static Accounting open(
      AccountingSettings settings,
      Path dataDir,
      RaftReplica replica,
      InstantSource clock,
      MeterRegistry meters)
      throws IOException {
    var store = AccountingStore.open(settings, dataDir);
    var writer = new AccountingWriter(replica, store, settings, clock, TICK, meters);
    writer.attach();
    return new Accounting(settings, store, writer);
  }

  public void start() {
    writer.start();
  }

  public AccountingSettings settings() {
    return settings;
  }

  public AccountingStore store() {
    return store;
  }

  public AccountingQueries queries() {
    return queries;
  }

  public AccountingWriter writer() {
    return writer;
  }

  @Override
  public void close() {
    writer.close();
    store.close();
  }
}

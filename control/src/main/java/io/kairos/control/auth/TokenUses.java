package io.kairos.control.auth;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * When tokens were last used, as this replica saw them, until they are written to the log: a use
 * costs a map update, not a log entry. The controller drains it about once a minute into one {@code
 * TokensUsed} entry (coalesced: the latest use of each token), so {@code kairos token list} lags a
 * use by a minute at most on other replicas, and a crash loses at most a minute of uses.
 */
public final class TokenUses implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TokenUses.class);

  /** How often a replica writes the uses it saw (one entry, if there were any). */
  public static final Duration EVERY = Duration.ofSeconds(60);

  private final ConcurrentHashMap<String, Long> pending = new ConcurrentHashMap<>();
  private ScheduledExecutorService writer;

  /** Notes that the token of hash {@code sha256} was used at {@code atMs}. */
  public void record(String sha256, long atMs) {
    pending.merge(sha256, atMs, Math::max);
  }

  /** A use not written yet, if any. */
  public Optional<Long> pending(String sha256) {
    return Optional.ofNullable(pending.get(sha256));
  }

  /** Takes the uses not written yet; a use recorded meanwhile stays for the next drain. */
  public Map<String, Long> drain() {
    var out = new HashMap<String, Long>(pending);
    out.forEach(pending::remove);
    return out;
  }

  /** Puts back uses whose entry was not committed. */
  public void restore(Map<String, Long> uses) {
    uses.forEach(this::record);
  }

  /**
   * Every {@code every}, drains the uses and hands them to {@code write} (which proposes them as
   * one log entry); uses whose entry fails are put back for the next time.
   */
  public synchronized void startWriting(
      Function<Map<String, Long>, CompletableFuture<?>> write, Duration every) {
    if (writer != null) {
      return;
    }
    writer =
        Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().name("kairos-token-uses").daemon().factory());
    writer.scheduleWithFixedDelay(
        () -> writeOnce(write), every.toMillis(), every.toMillis(), TimeUnit.MILLISECONDS);
  }

  private void writeOnce(Function<Map<String, Long>, CompletableFuture<?>> write) {
    Map<String, Long> used = drain();
    if (used.isEmpty()) {
      return;
    }
    try {
      write.apply(used).get(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      restore(used);
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException | RuntimeException e) {
      restore(used);
      LOG.debug("token uses not committed yet: {}", e.toString());
    }
  }

  @Override
  public synchronized void close() {
    if (writer != null) {
      writer.shutdownNow();
    }
  }
}

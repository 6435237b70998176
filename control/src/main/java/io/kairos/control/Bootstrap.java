package io.kairos.control;

import io.kairos.config.Tenancy;
import io.kairos.control.auth.Tokens;
import io.kairos.control.raft.RaftReplica;
import io.kairos.control.state.ConfigVersion;
import io.kairos.control.state.ControlCommand.AddToken;
import io.kairos.control.state.ControlCommand.ApplyConfig;
import io.kairos.control.state.ControlCommand.SetLimits;
import io.kairos.control.state.ControlResult;
import io.kairos.control.state.Limits;
import io.kairos.control.state.TokenRecord;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a starting replica puts in the log once a leader leads, each step retried until it is there:
 * the data directory's bootstrap tokens, this heap's default limits (only if none are set), and the
 * {@code --tenancy} file as the replicated configuration's first version (only if none was applied;
 * a later start with a different file is told that the replicated one stands). Runs on a thread of
 * its own; an interrupt (the controller closing) stops it.
 */
final class Bootstrap {
  private static final Logger LOG = LoggerFactory.getLogger(Bootstrap.class);

  /** Who {@link ConfigVersion#by} names for the file a first start brought. */
  static final String STARTUP_FILE = "kairos server --tenancy";

  private final RaftReplica replica;

  Bootstrap(RaftReplica replica) {
    this.replica = replica;
  }

  /** Whether {@link #run} has put everything in the log (or was interrupted). */
  private final java.util.concurrent.CountDownLatch done =
      new java.util.concurrent.CountDownLatch(1);

  void run(List<TokenRecord> tokens, Limits defaults, Optional<Tenancy> tenancy) {
    try {
      Thread.ofVirtual().name("kairos-wiped-check").start(this::warnIfWiped);
      addTokens(tokens);
      proposeDefaultLimits(defaults);
      tenancy.map(Tenancy::yaml).ifPresent(this::proposeStartupConfig);
    } finally {
      done.countDown();
    }
  }

  /** Whether the bootstrap tokens, the limits and the startup configuration are in the state. */
  boolean isDone() {
    return done.getCount() == 0;
  }

  /** An empty replica the leader sends nothing: what the admin must do, in the log. */
  private void warnIfWiped() {
    try {
      if (replica.membership().looksWiped(Duration.ofSeconds(10))) {
        String me = replica.self().host() + ":" + replica.self().httpPort();
        LOG.error(
            "this replica's data directory is new, but the group it is named in has a history the"
                + " leader will not send it (a lost or replaced disk: the leader believes this"
                + " member still holds what it acknowledged). Stop this replica; on a healthy one"
                + " run `kairos replicas remove {}`; start this one again on an empty data"
                + " directory with --join; then run `kairos replicas add {}` (docs/operations.md,"
                + " replacing a replica)",
            me,
            me);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Registers the bootstrap tokens in the replicated state, retrying until a leader commits. */
  private void addTokens(List<TokenRecord> tokens) {
    for (TokenRecord t : tokens) {
      while (!Thread.currentThread().isInterrupted()) {
        boolean known = replica.stateMachine().read(s -> s.token(t.sha256()).isPresent());
        if (known) {
          break;
        }
        try {
          replica.propose(new AddToken(System.currentTimeMillis(), t)).get(10, TimeUnit.SECONDS);
          break;
        } catch (InterruptedException e) {
          return;
        } catch (Exception e) {
          LOG.debug("token bootstrap not committed yet: {}", e.toString());
          if (!pause(50)) { // no leader yet: don't spin
            return;
          }
        }
      }
    }
  }

  /**
   * Once a leader leads and no limits are set, it proposes its heap's defaults (a command that
   * changes nothing if limits are set meanwhile); every replica watches, and stops once they are.
   */
  private void proposeDefaultLimits(Limits defaults) {
    var watch = replica.stateMachine().watch();
    while (!Thread.currentThread().isInterrupted()) {
      long seen = watch.version();
      if (replica.stateMachine().read(s -> s.limits().isPresent())) {
        return;
      }
      try {
        if (replica.isLeaderReady()) {
          var r =
              replica
                  .propose(new SetLimits(System.currentTimeMillis(), defaults, true))
                  .get(10, TimeUnit.SECONDS);
          if (r.isOk()) {
            LOG.info("limits set to this heap's defaults: {}", defaults);
          }
        } else {
          watch.awaitChange(seen, 500);
        }
      } catch (InterruptedException e) {
        return;
      } catch (Exception e) {
        LOG.debug("default limits not committed yet: {}", e.toString());
      }
    }
  }

  /**
   * The {@code --tenancy} file becomes version 1 of the replicated configuration, unless a version
   * is there already (this replica restarted, or another brought its file first): then the
   * replicated one stands, and a different file is named in a warning.
   */
  private void proposeStartupConfig(String yaml) {
    String sha = Tokens.hash(yaml);
    var watch = replica.stateMachine().watch();
    while (!Thread.currentThread().isInterrupted()) {
      long seen = watch.version();
      Optional<ConfigVersion> current = replica.stateMachine().read(s -> s.config());
      if (current.isPresent()) {
        if (!current.get().sha256().equals(sha)) {
          LOG.warn(
              "--tenancy: the file differs from the replicated configuration (version {}, applied"
                  + " by {}); the replicated one is in force. Change it with `kairos config apply"
                  + " FILE`, or start without --tenancy",
              current.get().version(),
              current.get().by());
        }
        return;
      }
      try {
        if (replica.isLeaderReady()) {
          ControlResult r =
              replica
                  .propose(
                      new ApplyConfig(
                          System.currentTimeMillis(), 0, yaml, sha, STARTUP_FILE, false))
                  .get(10, TimeUnit.SECONDS);
          if (r.isOk()) {
            LOG.info("--tenancy: the file is now version 1 of the replicated configuration");
          } else if (r.status() != 409 || r.error().contains("removes queue")) {
            LOG.warn("--tenancy: the file was not applied: {}", r.error());
            return;
          }
        } else {
          watch.awaitChange(seen, 500);
        }
      } catch (InterruptedException e) {
        return;
      } catch (Exception e) {
        LOG.debug("the --tenancy file not committed yet: {}", e.toString());
        if (!pause(50)) {
          return;
        }
      }
    }
  }

  private static boolean pause(long ms) {
    try {
      Thread.sleep(ms);
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}

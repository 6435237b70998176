package io.kairos.cli;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kairos.agent.account.Account;
import io.kairos.agent.account.Nss;
import io.kairos.agent.account.Setpriv;
import io.kairos.agent.account.TaskOwners;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.concurrent.TimeUnit;

/**
 * Real Unix accounts for the end-to-end tests of jobs run as their owners: {@code kairos-alice} and
 * {@code kairos-bob}, created with {@code useradd} when missing (idempotent, and safe when several
 * test JVMs race). Only root can create them and run processes as them: {@link #assumeRoot} skips a
 * test otherwise, saying why. CI runs the tests as root.
 */
final class UnixUsers {
  static final String ALICE = "kairos-alice";
  static final String BOB = "kairos-bob";

  private UnixUsers() {}

  /** Skips the calling test unless this JVM runs as root with useradd and setpriv. */
  static void assumeRoot() {
    assumeTrue(
        TaskOwners.thisProcess().isRoot(),
        "needs root: it creates Unix users (useradd) and runs jobs as them; CI runs as root");
    assumeTrue(
        Files.isExecutable(Path.of("/usr/sbin/useradd")) && Setpriv.available(),
        "needs useradd and setpriv (util-linux) to create users and run jobs as them");
  }

  /** The account {@code name}, created first when the host has none. */
  static synchronized Account ensure(String name) {
    try {
      if (lookup(name) == null) {
        // Exit 9: another test JVM created it meanwhile.
        run("useradd", "-M", "-U", "-d", "/nonexistent", "-s", "/usr/sbin/nologin", name);
      }
      Account account = lookup(name);
      if (account == null) {
        throw new IllegalStateException("useradd " + name + " made no account");
      }
      return account;
    } catch (IOException e) {
      throw new IllegalStateException("cannot create test user " + name, e);
    }
  }

  private static Account lookup(String name) throws IOException {
    return new Nss(Setpriv.binary("getent"), InstantSource.system()).find(name).orElse(null);
  }

  private static void run(String... argv) throws IOException {
    Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
    try {
      String out = new String(p.getInputStream().readAllBytes());
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IOException(String.join(" ", argv) + " timed out");
      }
      if (p.exitValue() != 0 && p.exitValue() != 9) {
        throw new IOException(String.join(" ", argv) + " exited " + p.exitValue() + ": " + out);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException(e);
    }
  }
}

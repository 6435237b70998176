package io.kairos.agent.account;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Real Unix accounts for the tests that start tasks as other users: {@code kairos-alice} (also in
 * group {@code kairos-team}) and {@code kairos-bob}, created with {@code useradd} when missing (so
 * it is idempotent, and safe when several test JVMs race: "already exists" counts as done). Only
 * root can create them and start processes as them: {@link #assumeRoot} skips a test otherwise,
 * saying why. CI runs the tests as root.
 */
public final class UnixUsers {
  public static final String ALICE = "kairos-alice";
  public static final String BOB = "kairos-bob";
  public static final String TEAM = "kairos-team";

  private UnixUsers() {}

  /** Skips the calling test unless this JVM runs as root on a host with useradd and setpriv. */
  public static void assumeRoot() {
    assumeTrue(
        TaskOwners.thisProcess().isRoot(),
        "needs root: it creates Unix users (useradd) and starts tasks as them; CI runs as root");
    assumeTrue(
        Files.isExecutable(Path.of("/usr/sbin/useradd")) && Setpriv.available(),
        "needs useradd and setpriv (util-linux) to create users and start tasks as them");
  }

  /** Alice, with her groups. Call {@link #assumeRoot} first. */
  public static Account alice() {
    return ensure(ALICE, true);
  }

  /** Bob. Call {@link #assumeRoot} first. */
  public static Account bob() {
    return ensure(BOB, false);
  }

  private static synchronized Account ensure(String name, boolean team) {
    try {
      run("groupadd", "-f", TEAM);
      if (lookup(name) == null) {
        // Exit 9: created meanwhile by another test JVM.
        run(9, "useradd", "-M", "-U", "-d", "/nonexistent", "-s", "/usr/sbin/nologin", name);
      }
      if (team) {
        run("usermod", "-a", "-G", TEAM, name);
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

  /** The gid of {@link #TEAM}. */
  public static int teamGid() throws IOException {
    var r =
        io.kairos.agent.gpu.CommandRunner.run(
            List.of("getent", "group", TEAM), java.util.Map.of(), java.time.Duration.ofSeconds(10));
    return Integer.parseInt(r.stdout().strip().split(":")[2]);
  }

  private static Account lookup(String name) throws IOException {
    return new Nss(Setpriv.binary("getent"), InstantSource.system()).find(name).orElse(null);
  }

  private static void run(String... argv) throws IOException {
    run(0, argv);
  }

  private static void run(int alsoOk, String... argv) throws IOException {
    Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
    try {
      String out = new String(p.getInputStream().readAllBytes());
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IOException(String.join(" ", argv) + " timed out");
      }
      if (p.exitValue() != 0 && p.exitValue() != alsoOk) {
        throw new IOException(String.join(" ", argv) + " exited " + p.exitValue() + ": " + out);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException(e);
    }
  }
}

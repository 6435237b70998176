package io.kairos.agent.account;

import io.kairos.agent.gpu.CommandResult;
import io.kairos.agent.gpu.CommandRunner;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * Accounts from the node's NSS, as {@code getent} sees them: {@code getent passwd NAME} for the
 * uid, primary group and home, {@code getent initgroups NAME} for the supplementary groups. So
 * whatever the node's {@code nsswitch.conf} names (files, LDAP through SSSD or nslcd, winbind)
 * works, with no JNI and no NSS module of our own.
 *
 * <p>Answers are cached for {@code ttl} (a missing account for a shorter while), so a burst of
 * tasks costs two lookups, and a changed account is seen within the TTL. Thread-safe.
 */
public final class Nss implements AccountLookup {
  /** How long a found account is kept. */
  public static final Duration TTL = Duration.ofSeconds(60);

  /** How long "no such account" is kept: an account created since is found soon. */
  public static final Duration MISSING_TTL = Duration.ofSeconds(5);

  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  /**
   * A name {@code getent} reads as a name: no leading '-' (an option) or '.', no ':' or white
   * space, at most 64 characters, and not all digits (which it would read as a uid).
   */
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9._@-]{0,63}");

  private record Cached(Optional<Account> account, Instant until) {}

  private final String getent;
  private final InstantSource clock;
  private final Map<String, Cached> cache = new ConcurrentHashMap<>();

  /** Looks accounts up with {@code getent} (a path or a name on the PATH). */
  public Nss(String getent, InstantSource clock) {
    this.getent = getent;
    this.clock = clock;
  }

  /** The node's NSS through the first {@code getent} on the usual paths. */
  public static Nss system(InstantSource clock) {
    return new Nss(Setpriv.binary("getent"), clock);
  }

  /** Whether {@code name} can name an account: see {@link #NAME}. */
  public static boolean isAccountName(String name) {
    return name != null
        && NAME.matcher(name).matches()
        && !name.chars().allMatch(Character::isDigit);
  }

  @Override
  public Optional<Account> find(String name) throws IOException {
    if (!isAccountName(name)) {
      throw new IOException("'" + name + "' is not a Unix account name");
    }
    Instant now = clock.instant();
    Cached hit = cache.get(name);
    if (hit != null && now.isBefore(hit.until())) {
      return hit.account();
    }
    Optional<Account> found = lookUp(name);
    cache.put(name, new Cached(found, now.plus(found.isPresent() ? TTL : MISSING_TTL)));
    return found;
  }

  private Optional<Account> lookUp(String name) throws IOException {
    CommandResult passwd = CommandRunner.run(List.of(getent, "passwd", name), Map.of(), TIMEOUT);
    if (passwd.exitCode() == 2) {
      return Optional.empty();
    }
    if (!passwd.isSuccess()) {
      throw new IOException("getent passwd " + name + " failed: " + passwd.describeFailure());
    }
    CommandResult groups =
        CommandRunner.run(List.of(getent, "initgroups", name), Map.of(), TIMEOUT);
    if (!groups.isSuccess() && groups.exitCode() != 2) {
      throw new IOException("getent initgroups " + name + " failed: " + groups.describeFailure());
    }
    return Optional.of(parse(passwd.stdout(), groups.isSuccess() ? groups.stdout() : ""));
  }

  /**
   * The account from {@code getent passwd}'s line ({@code name:x:uid:gid:gecos:home:shell}) and
   * {@code getent initgroups}' ({@code name g1 g2 ...}, the supplementary groups).
   *
   * @throws IOException when the passwd line is not one
   */
  static Account parse(String passwdLine, String initgroupsLine) throws IOException {
    String line = passwdLine.strip();
    int newline = line.indexOf('\n');
    if (newline >= 0) {
      line = line.substring(0, newline);
    }
    String[] f = line.split(":", -1);
    if (f.length < 7) {
      throw new IOException("getent passwd gave no passwd entry: '" + line + "'");
    }
    int uid;
    int gid;
    try {
      uid = Integer.parseInt(f[2]);
      gid = Integer.parseInt(f[3]);
    } catch (NumberFormatException e) {
      throw new IOException("getent passwd gave a bad uid or gid: '" + line + "'");
    }
    var groups = new LinkedHashSet<Integer>();
    groups.add(gid);
    String[] words = initgroupsLine.strip().split("\\s+");
    for (int i = 1; i < words.length; i++) {
      try {
        groups.add(Integer.parseInt(words[i]));
      } catch (NumberFormatException e) {
        throw new IOException("getent initgroups gave a bad group: '" + initgroupsLine + "'");
      }
    }
    return new Account(f[0], uid, gid, new ArrayList<>(groups), f[5].isEmpty() ? "/" : f[5]);
  }
}

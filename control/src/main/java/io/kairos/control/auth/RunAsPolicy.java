package io.kairos.control.auth;

import io.kairos.control.state.UserRecord;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Which Unix account a Kairos user's jobs run as, decided at submission and recorded with the job:
 * the user's row in the replicated user table, else the account of the same name; for the bootstrap
 * admin (the user of {@code DATA/admin.token}) without a row, {@code adminRunsAs}. A job whose
 * account is root is refused unless {@code allowRootJobs}.
 *
 * @param adminRunsAs the bootstrap admin's account: the server's {@code --admin-runs-as}, by
 *     default the account the server process runs as
 * @param allowRootJobs whether jobs may run as root ({@code --allow-root-jobs}): a single-user
 *     machine whose one user is root ({@code kairos up} as root), never a shared cluster
 */
public record RunAsPolicy(String adminRunsAs, boolean allowRootJobs) {
  /** The user of the bootstrap admin token ({@code DATA/admin.token}). */
  public static final String BOOTSTRAP_ADMIN = "admin";

  public static final String ROOT = "root";

  /**
   * A Unix account name as the nodes' NSS knows it: letters, digits, '.', '_', '@' or '-', not
   * starting with '-' or '.', at most 64 (LDAP and SSSD names such as {@code alice@example.org}
   * fit), and not all digits (which {@code getent} would read as a uid).
   */
  private static final Pattern ACCOUNT = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9._@-]{0,63}");

  public RunAsPolicy {
    Objects.requireNonNull(adminRunsAs, "adminRunsAs");
  }

  /**
   * The policy of a server started without options: the admin runs as the server's account. (A
   * server whose account has no name, "?" in a container without a passwd entry, starts all the
   * same; the admin's submissions are then refused until an admin row maps it.)
   */
  public static RunAsPolicy serverDefaults() {
    return new RunAsPolicy(System.getProperty("user.name"), false);
  }

  /**
   * The policy of {@code --admin-runs-as ACCOUNT} (null: the server's account) and {@code
   * --allow-root-jobs}.
   *
   * @throws IllegalArgumentException when {@code adminRunsAs} is given and is not an account name
   */
  public static RunAsPolicy of(String adminRunsAs, boolean allowRootJobs) {
    if (adminRunsAs == null) {
      return new RunAsPolicy(System.getProperty("user.name"), allowRootJobs);
    }
    if (!isAccount(adminRunsAs)) {
      throw new IllegalArgumentException(
          "--admin-runs-as '"
              + adminRunsAs
              + "' is not a Unix account name (letters, digits, '.', '_', '@' or '-', not all"
              + " digits)");
    }
    return new RunAsPolicy(adminRunsAs, allowRootJobs);
  }

  /** The account {@code user}'s jobs run as, given the user's row in the table (if any). */
  public String accountOf(String user, Optional<UserRecord> row) {
    return row.map(UserRecord::unixUser).orElse(user.equals(BOOTSTRAP_ADMIN) ? adminRunsAs : user);
  }

  /**
   * Whether a job running as {@code account} must be refused: root, on a cluster that refuses it.
   */
  public boolean refuses(String account) {
    return !allowRootJobs && ROOT.equals(account);
  }

  /** Whether {@code name} can name a Unix account on the nodes. */
  public static boolean isAccount(String name) {
    return name != null
        && ACCOUNT.matcher(name).matches()
        && !name.chars().allMatch(Character::isDigit);
  }
}

package io.kairos.control.auth;

import io.kairos.core.fairshare.AccountTree;
import java.util.Locale;
import java.util.Optional;

/**
 * Who may read a job's private data: its {@code env}, command, workdir, output and error paths,
 * checkpoint directory and logs (Slurm's {@code PrivateData=jobs}). The rest of a job (name, user,
 * state, GPUs, placement, reasons, times) is shown to every user. Admins read everything.
 *
 * <p>The level is a server setting ({@code kairos server --private-data}); give every replica the
 * same one.
 */
public enum PrivateData {
  /** The job's owner and admins (the default). */
  OWNER,
  /**
   * Also the members of the account the job is charged to: a user whose name is an account of the
   * tenancy's account tree (organisation &gt; team &gt; user) that is the job's account or lies
   * under it. A job charged to the team {@code ml} is readable by every user under {@code ml}.
   * Without an account tree this is {@link #OWNER}.
   */
  ACCOUNT,
  /** Every user. */
  ALL;

  /** The level named {@code text} (owner, account or all, any case). */
  public static Optional<PrivateData> parse(String text) {
    try {
      return Optional.of(valueOf(text.trim().toUpperCase(Locale.ROOT)));
    } catch (IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  /**
   * Whether {@code who} may read the private data of a job of {@code owner}, charged to {@code
   * account} (empty for none).
   *
   * @param accounts the tenancy's account tree, or null without one
   */
  public boolean mayRead(Principal who, String owner, String account, AccountTree accounts) {
    if (who.isAdmin() || who.user().equals(owner)) {
      return true;
    }
    return switch (this) {
      case OWNER -> false;
      case ACCOUNT -> isMember(who.user(), account, accounts);
      case ALL -> true;
    };
  }

  /** Whether the account named {@code user} is {@code account} or lies under it in the tree. */
  static boolean isMember(String user, String account, AccountTree accounts) {
    if (accounts == null || account.isEmpty() || !accounts.contains(user)) {
      return false;
    }
    if (!accounts.contains(account)) {
      return false;
    }
    int target = accounts.id(account);
    for (int id = accounts.id(user); id != AccountTree.NO_PARENT; id = accounts.parent(id)) {
      if (id == target) {
        return true;
      }
    }
    return false;
  }

  @Override
  public String toString() {
    return name().toLowerCase(Locale.ROOT);
  }
}

package io.kairos.control.accounting;

import java.util.List;

/**
 * Whose records a reader may see: everyone's (an admin, or a site whose privacy setting is {@code
 * all}), or their own plus those charged to the accounts listed (with {@code --private-data
 * account}: the accounts they are a member of).
 */
public record Visibility(boolean all, String user, List<String> accounts) {
  public Visibility {
    accounts = List.copyOf(accounts);
  }

  public static Visibility everyone() {
    return new Visibility(true, "", List.of());
  }

  public static Visibility own(String user, List<String> accounts) {
    return new Visibility(false, user, accounts);
  }

  /**
   * The SQL condition on the {@code jobs} table aliased {@code j}; its parameters in {@link
   * #params}.
   */
  String condition() {
    if (all) {
      return "1 = 1";
    }
    if (accounts.isEmpty()) {
      return "j.user_name = ?";
    }
    return "(j.user_name = ? OR j.account IN ("
        + String.join(",", java.util.Collections.nCopies(accounts.size(), "?"))
        + "))";
  }

  List<Object> params() {
    if (all) {
      return List.of();
    }
    var out = new java.util.ArrayList<Object>();
    out.add(user);
    out.addAll(accounts);
    return out;
  }
}

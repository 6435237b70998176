package io.kairos.agent.account;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The privilege drop: util-linux {@code setpriv}, which sets the real and effective uid and gid and
 * the supplementary groups and then {@code exec}s the program, as root only can. A well-known tool
 * rather than native code of our own; its argv never holds user text but the account's numbers.
 */
public final class Setpriv {
  private static final List<String> DIRS = List.of("/usr/bin", "/bin", "/usr/sbin", "/sbin");

  private Setpriv() {}

  /** {@code name} in the first of /usr/bin, /bin, /usr/sbin, /sbin that has it; else the name. */
  public static String binary(String name) {
    for (String dir : DIRS) {
      Path p = Path.of(dir, name);
      if (Files.isExecutable(p)) {
        return p.toString();
      }
    }
    return name;
  }

  /** Whether this node has {@code setpriv} (util-linux) where {@link #binary} looks. */
  public static boolean available() {
    return binary("setpriv").startsWith("/");
  }

  /**
   * The argv prefix that runs what follows as {@code account}: {@code setpriv --reuid=UID
   * --regid=GID --groups=G1,G2 --inh-caps=-all --}. Leaving uid 0 clears the permitted and
   * effective capabilities; the inheritable set is cleared too, so nothing is passed on.
   */
  public static List<String> as(Account account) {
    var argv = new ArrayList<String>();
    argv.add(binary("setpriv"));
    argv.add("--reuid=" + account.uid());
    argv.add("--regid=" + account.gid());
    argv.add(
        account.groups().isEmpty()
            ? "--clear-groups"
            : "--groups="
                + account.groups().stream().map(String::valueOf).collect(Collectors.joining(",")));
    argv.add("--inh-caps=-all");
    argv.add("--");
    return List.copyOf(argv);
  }
}

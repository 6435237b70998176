package io.kairos.agent;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The modes of the agent's data directory, set at start so that no job reaches the agent's own
 * files whatever the umask it was started with:
 *
 * <pre>
 * DATA/                0711  entered by name, never listed
 * DATA/tasks/          0711  each job enters its own task directory by name
 * DATA/tasks/KEY/      0700  the task's owner's (see {@link ProcessLauncher})
 * DATA/tasks/KEY.task  0600  the agent's record of the task's files ({@link TaskFiles})
 * DATA/fence/          0700  lease, task registry and watchdog state, files 0600
 * </pre>
 */
final class AgentFiles {
  private static final Logger log = LoggerFactory.getLogger(AgentFiles.class);

  private AgentFiles() {}

  /**
   * Creates the directories above with their modes. When the agent is root (it starts tasks as
   * other accounts), warns about a directory above {@code DATA} that other accounts cannot enter:
   * their tasks could not reach their own directories.
   */
  static void secure(Path dataDir, boolean root) throws IOException {
    Files.createDirectories(dataDir);
    mode(dataDir, "rwx--x--x");
    Path tasks = dataDir.resolve("tasks");
    Files.createDirectories(tasks);
    mode(tasks, "rwx--x--x");
    Path fence = dataDir.resolve("fence");
    Files.createDirectories(fence);
    mode(fence, "rwx------");
    if (root) {
      List<Path> closed = closedAncestors(dataDir.toAbsolutePath());
      if (!closed.isEmpty()) {
        log.warn(
            "tasks of other accounts cannot reach their directories under {}: {} cannot be entered"
                + " by other accounts (give them o+x, or choose another --data)",
            tasks,
            closed);
      }
    }
  }

  /** The directories above {@code dir} that others may not enter (no o+x). */
  static List<Path> closedAncestors(Path dir) throws IOException {
    var closed = new ArrayList<Path>();
    for (Path p = dir.getParent(); p != null; p = p.getParent()) {
      Set<PosixFilePermission> perms = Files.getPosixFilePermissions(p);
      if (!perms.contains(PosixFilePermission.OTHERS_EXECUTE)) {
        closed.add(p);
      }
    }
    return closed;
  }

  private static void mode(Path dir, String mode) throws IOException {
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString(mode));
  }
}

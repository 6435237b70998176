package io.kairos.agent;

import io.kairos.agent.account.Account;
import io.kairos.protocol.CheckpointLocation;
import io.kairos.protocol.agent.TaskAssignment;
import io.kairos.protocol.agent.TaskCheckpoint;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;

/**
 * A checkpointing job's directory and what its tasks are told about it.
 *
 * <p>The directory is the job's own {@code checkpointDir} when it gave one (its owner's business:
 * Kairos neither creates nor cleans it), else {@code <dataDir>/checkpoints/<job id>}, the same for
 * every attempt of the job on this node. The agent makes that one before the task starts: its
 * parent is the agent's (mode 0711: an owner reaches their own job's directory by name, nobody
 * lists the others), and the job's directory belongs to the job's owner, mode 0700; a symbolic link
 * planted in its place is refused. So another user's job can neither read nor plant a checkpoint.
 *
 * <p>A job may instead keep its checkpoints in S3-compatible object storage ({@code checkpointDir:
 * s3://bucket/prefix}): its tasks then get that URL as {@code KAIROS_CHECKPOINT_URL}, no directory,
 * and the node's endpoint ({@code kairos agent --checkpoint-s3-endpoint}) as {@code
 * KAIROS_S3_ENDPOINT}; the credentials are the job owner's own (their {@code ~/.aws}, or the node's
 * instance role), never the agent's.
 *
 * <p>The variables: {@code KAIROS_CHECKPOINT_DIR}, {@code KAIROS_CHECKPOINT_URL} ({@code file://}
 * and the directory, or the {@code s3://} location), {@code KAIROS_S3_ENDPOINT}, {@code
 * KAIROS_CHECKPOINT_SIGNAL}, {@code KAIROS_CHECKPOINT_TIMEOUT} and {@code KAIROS_CHECKPOINT_EVERY}
 * (seconds), {@code KAIROS_CHECKPOINT_KEEP}, and {@code KAIROS_RESTORE_STEP} when Kairos has
 * recorded a checkpoint of the job.
 */
final class TaskCheckpoints {
  static final String DIR = "KAIROS_CHECKPOINT_DIR";

  /** The S3 endpoint tasks are told, in what the agent tells every task (its kairosEnv). */
  static final String S3_ENDPOINT = "KAIROS_S3_ENDPOINT";

  private static final LinkOption NOFOLLOW = LinkOption.NOFOLLOW_LINKS;

  private TaskCheckpoints() {}

  /** Where the agent keeps the directories of jobs that gave none. */
  static Path root(Path dataDir) {
    return dataDir.toAbsolutePath().resolve("checkpoints");
  }

  /** The job's checkpoint directory on this node; null when it does not checkpoint. */
  static Path dir(TaskAssignment a, Path dataDir) {
    if (CheckpointLocation.isObjectStorage(a.checkpointDir())) {
      return null;
    }
    if (a.checkpointDir() != null && !a.checkpointDir().isBlank()) {
      return Path.of(a.checkpointDir());
    }
    return a.checkpoint() == null ? null : root(dataDir).resolve(Long.toString(a.jobId()));
  }

  /** Adds the checkpoint variables of a checkpointing job's task to {@code env}. */
  static void environment(
      Map<String, String> env, TaskAssignment a, Path dataDir, Map<String, String> kairosEnv) {
    TaskCheckpoint c = a.checkpoint();
    for (String name :
        new String[] {
          "KAIROS_CHECKPOINT_URL",
          S3_ENDPOINT,
          "KAIROS_CHECKPOINT_SIGNAL",
          "KAIROS_CHECKPOINT_TIMEOUT",
          "KAIROS_CHECKPOINT_EVERY",
          "KAIROS_CHECKPOINT_KEEP",
          "KAIROS_RESTORE_STEP"
        }) {
      env.remove(name);
    }
    if (CheckpointLocation.isObjectStorage(a.checkpointDir())) {
      env.remove(DIR);
      env.put("KAIROS_CHECKPOINT_URL", CheckpointLocation.parse(a.checkpointDir()).url());
      if (kairosEnv.get(S3_ENDPOINT) != null) {
        env.put(S3_ENDPOINT, kairosEnv.get(S3_ENDPOINT));
      }
    } else {
      Path dir = dir(a, dataDir);
      if (dir == null) {
        return;
      }
      env.put(DIR, dir.toString());
      env.put("KAIROS_CHECKPOINT_URL", url(dir));
    }
    if (c == null) {
      return;
    }
    env.put("KAIROS_CHECKPOINT_SIGNAL", c.signal());
    env.put("KAIROS_CHECKPOINT_TIMEOUT", Long.toString(c.timeoutSec()));
    env.put("KAIROS_CHECKPOINT_EVERY", Long.toString(c.everySec()));
    env.put("KAIROS_CHECKPOINT_KEEP", Integer.toString(c.keep()));
    if (c.restoreStep() != null) {
      env.put("KAIROS_RESTORE_STEP", Long.toString(c.restoreStep()));
    }
  }

  /** {@code file://} and the directory, without a trailing '/' (whether it exists yet or not). */
  static String url(Path dir) {
    String u = dir.toAbsolutePath().toUri().toString();
    return u.endsWith("/") ? u.substring(0, u.length() - 1) : u;
  }

  /**
   * Makes the job's directory under the agent's root, owned by {@code spec}'s owner, mode 0700;
   * nothing for a job that gave its own directory or does not checkpoint.
   *
   * @throws IOException when it cannot be made, or something not a directory stands in its place
   */
  static void prepare(LaunchSpec spec) throws IOException {
    String named = spec.env().get(DIR);
    if (named == null) {
      return;
    }
    Path dir = Path.of(named);
    Path root = root(spec.taskDir().getParent().getParent());
    if (!root.equals(dir.getParent())) {
      return;
    }
    Files.createDirectories(root);
    Files.setPosixFilePermissions(root, PosixFilePermissions.fromString("rwx--x--x"));
    if (!Files.exists(dir, NOFOLLOW)) {
      Files.createDirectory(dir);
    }
    if (!Files.isDirectory(dir, NOFOLLOW)) {
      throw new IOException("checkpoint directory " + dir + " is not a directory");
    }
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
    Account owner = spec.owner();
    if (owner != null && (int) Files.getAttribute(dir, "unix:uid", NOFOLLOW) != owner.uid()) {
      Files.setAttribute(dir, "unix:uid", owner.uid(), NOFOLLOW);
      Files.setAttribute(dir, "unix:gid", owner.gid(), NOFOLLOW);
    }
  }
}

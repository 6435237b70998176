package io.kairos.control.agent;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * The longest lease this replica may have granted before it started, kept in {@code
 * DATA/agent-lease}, so that a controller restarted with a shorter {@code --lease} still waits out
 * the longer leases its agents hold: an agent keeps the lease its last accepted reply gave until
 * the next one, and one cut off since the restart never hears of the new length.
 *
 * <p>At start the file is read (missing or unreadable: {@link #LEGACY_LEASE_MS}, what releases
 * before the setting granted) and then holds the longer of it and the new lease; once the prior
 * lease has surely run out since the start, {@link #settle} writes the new one alone. Each write is
 * a temp file (0600) renamed over the old one. One replica's record: the replicas of a group must
 * run with the same lease (docs/operations.md).
 */
public final class PriorLeases {
  /** The lease every release before {@code --lease} granted. */
  public static final long LEGACY_LEASE_MS = 10_000;

  static final String FILE = "agent-lease";

  private PriorLeases() {}

  /** The longest lease granted before this start (ms); records the longer of it and {@code now}. */
  public static long readAndRecord(Path dataDir, LeaseSettings now) throws IOException {
    long prior = read(dataDir);
    write(dataDir, Math.max(prior, now.leaseMs()));
    return prior;
  }

  /** The prior leases have run out: only {@code now} can be held from here on. */
  public static void settle(Path dataDir, LeaseSettings now) throws IOException {
    write(dataDir, now.leaseMs());
  }

  static long read(Path dataDir) {
    try {
      long ms = Long.parseLong(Files.readString(dataDir.resolve(FILE)).strip());
      return ms > 0 && ms <= LeaseSettings.MAX_LEASE_MS ? ms : LEGACY_LEASE_MS;
    } catch (IOException | NumberFormatException e) {
      return LEGACY_LEASE_MS;
    }
  }

  private static void write(Path dataDir, long leaseMs) throws IOException {
    Path tmp = dataDir.resolve(FILE + ".tmp");
    Files.deleteIfExists(tmp);
    // Private, as everything under the data directory, whatever the process's umask.
    Files.createFile(
        tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    Files.writeString(tmp, leaseMs + "\n", StandardCharsets.US_ASCII);
    Files.move(
        tmp,
        dataDir.resolve(FILE),
        StandardCopyOption.ATOMIC_MOVE,
        StandardCopyOption.REPLACE_EXISTING);
  }
}

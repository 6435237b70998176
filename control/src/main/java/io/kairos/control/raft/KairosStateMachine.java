package io.kairos.control.raft;

import io.kairos.control.state.ControlCommand;
import io.kairos.control.state.ControlResult;
import io.kairos.control.state.ControlState;
import io.kairos.control.state.StateImage;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Function;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.MD5FileUtil;

/**
 * Applies the controller's log to a {@link ControlState}, following Ratis' state machine contract:
 * apply is deterministic (the command carries its time), reads never mutate, and a snapshot is an
 * image of the records written to a temp file, fsynced, renamed over the target and the directory
 * fsynced, so a crash leaves either the old snapshot or the new one.
 *
 * <p>The state is guarded by a read-write lock: the apply thread writes, API handlers and the
 * scheduler read through {@link #read}. An exception while applying means a bug or a corrupt log:
 * it propagates and Ratis stops the replica (better stopped than diverged).
 */
public final class KairosStateMachine extends BaseStateMachine {
  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(KairosStateMachine.class);
  private final SimpleStateMachineStorage storage = new SimpleStateMachineStorage();
  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  private final StateWatch watch = new StateWatch();
  private ControlState state = new ControlState();
  private final java.util.concurrent.ExecutorService snapshotWriter =
      java.util.concurrent.Executors.newSingleThreadExecutor(
          Thread.ofPlatform().name("kairos-snapshot-writer").daemon().factory());

  /** Written by the apply thread only. */
  private java.util.concurrent.Future<Void> writing;

  private volatile long durableIndex = RaftLog.INVALID_LOG_INDEX;

  @Override
  public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage)
      throws IOException {
    super.initialize(server, groupId, raftStorage);
    storage.init(raftStorage);
    load(storage.getLatestSnapshot());
  }

  @Override
  public void reinitialize() throws IOException {
    load(storage.getLatestSnapshot());
  }

  @Override
  public SimpleStateMachineStorage getStateMachineStorage() {
    return storage;
  }

  /** Runs {@code reader} under the read lock: a consistent view, never kept past the call. */
  public <T> T read(Function<ControlState, T> reader) {
    lock.readLock().lock();
    try {
      return reader.apply(state);
    } finally {
      lock.readLock().unlock();
    }
  }

  public StateWatch watch() {
    return watch;
  }

  @Override
  public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
    LogEntryProto entry = trx.getLogEntry();
    ControlCommand command =
        CommandCodec.decode(entry.getStateMachineLogEntry().getLogData().toByteArray());
    ControlResult result;
    lock.writeLock().lock();
    try {
      result = state.apply(command);
      updateLastAppliedTermIndex(entry.getTerm(), entry.getIndex());
    } finally {
      lock.writeLock().unlock();
    }
    watch.changed();
    return CompletableFuture.completedFuture(
        Message.valueOf(ByteString.copyFrom(CommandCodec.encodeResult(result))));
  }

  /**
   * Snapshots without stalling the log: Ratis calls this on its apply thread, so it only copies the
   * records (under the read lock, milliseconds) and hands the encoding, fsync and rename to a
   * background writer. It returns the index of the last snapshot that is durable on disk; that is
   * what Ratis may purge the log up to, so a crash mid-write loses nothing. Ratis calls again while
   * it is behind; a failed write is rethrown on the next call.
   */
  @Override
  public long takeSnapshot() throws IOException {
    if (writing != null) {
      if (!writing.isDone()) {
        return durableIndex;
      }
      finishWrite();
      return durableIndex; // Ratis records it, and asks again only a threshold later
    }
    StateImage copy;
    TermIndex last;
    long t0 = System.nanoTime();
    lock.readLock().lock();
    try {
      last = getLastAppliedTermIndex();
      if (last == null || last.getIndex() <= durableIndex) {
        return durableIndex;
      }
      copy = state.image();
    } finally {
      lock.readLock().unlock();
    }
    TermIndex at = last;
    long copiedNanos = System.nanoTime() - t0;
    writing =
        snapshotWriter.submit(
            () -> {
              long t1 = System.nanoTime();
              writeSnapshot(copy, at);
              LOG.info(
                  "snapshot at index {}: {} jobs, copied in {} ms under the lock, written in {} ms",
                  at.getIndex(),
                  copy.jobs().size(),
                  copiedNanos / 1_000_000,
                  (System.nanoTime() - t1) / 1_000_000);
              return null;
            });
    return durableIndex;
  }

  private void finishWrite() throws IOException {
    try {
      writing.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while writing a snapshot", e);
    } catch (java.util.concurrent.ExecutionException e) {
      throw new IOException("writing a snapshot failed", e.getCause());
    } finally {
      writing = null;
    }
  }

  private void writeSnapshot(StateImage copy, TermIndex last) throws IOException {
    var bytes = new ByteArrayOutputStream(1 << 16);
    CommandCodec.writeImage(copy, bytes, KairosStateMachine::pace);
    File target = storage.getSnapshotFile(last.getTerm(), last.getIndex());
    writeAtomically(target.toPath(), bytes.toByteArray());
    var md5 = MD5FileUtil.computeAndSaveMd5ForFile(target);
    storage.updateLatestSnapshot(
        new SingleFileSnapshotInfo(new FileInfo(target.toPath(), md5), last));
    durableIndex = last.getIndex();
  }

  /** Between chunks of a snapshot: a short sleep, so encoding takes at most about half a core. */
  private static void pace() {
    try {
      Thread.sleep(5);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Waits for a snapshot being written, so a clean stop leaves it complete. */
  @Override
  public void close() throws IOException {
    try {
      if (writing != null) {
        finishWrite();
      }
    } finally {
      snapshotWriter.shutdown();
      super.close();
    }
  }

  /** Temp file, fsync, atomic rename, fsync of the directory. Every failure propagates. */
  static void writeAtomically(Path target, byte[] bytes) throws IOException {
    Path dir = target.getParent();
    Path tmp = dir.resolve(target.getFileName() + ".tmp");
    try (FileChannel ch =
        FileChannel.open(
            tmp,
            StandardOpenOption.CREATE,
            StandardOpenOption.TRUNCATE_EXISTING,
            StandardOpenOption.WRITE)) {
      var buffer = java.nio.ByteBuffer.wrap(bytes);
      while (buffer.hasRemaining()) {
        ch.write(buffer);
      }
      ch.force(true);
    }
    Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
      d.force(true);
    }
  }

  private void load(SingleFileSnapshotInfo snapshot) throws IOException {
    if (snapshot == null) {
      return;
    }
    Path path = snapshot.getFile().getPath();
    if (!Files.exists(path)) {
      throw new IOException("snapshot " + path + " is missing");
    }
    var md5 = snapshot.getFile().getFileDigest();
    if (md5 != null) {
      MD5FileUtil.verifySavedMD5(path.toFile(), md5);
    }
    StateImage image;
    try (InputStream in = new BufferedInputStream(Files.newInputStream(path))) {
      image = CommandCodec.readImage(in);
    }
    var loaded = ControlState.of(image);
    lock.writeLock().lock();
    try {
      state = loaded;
      updateLastAppliedTermIndex(snapshot.getTermIndex());
      durableIndex = snapshot.getIndex();
    } finally {
      lock.writeLock().unlock();
    }
    watch.changed();
  }
}

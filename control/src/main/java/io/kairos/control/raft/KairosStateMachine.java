package io.kairos.control.raft;

import io.kairos.control.Fatal;
import io.kairos.control.state.ControlCommand;
import io.kairos.control.state.ControlResult;
import io.kairos.control.state.ControlState;
import io.kairos.control.state.StateImage;
import java.io.BufferedInputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.List;
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

  /** The copy of the state that snapshots are taken from, off the apply thread. */
  private final ShadowState shadow = new ShadowState();

  /** Written by the apply thread only. */
  private java.util.concurrent.Future<Void> writing;

  /** What a failed apply does: stop the process ({@link Fatal#exit}); tests record it instead. */
  private final java.util.function.BiConsumer<String, Throwable> onFatal;

  public KairosStateMachine() {
    this(Fatal::exit);
  }

  KairosStateMachine(java.util.function.BiConsumer<String, Throwable> onFatal) {
    this.onFatal = onFatal;
  }

  private volatile long durableIndex = RaftLog.INVALID_LOG_INDEX;

  /**
   * Snapshots written by this replica, and the time of the last and longest (ms, request to
   * durable).
   */
  private final java.util.concurrent.atomic.AtomicLong snapshots =
      new java.util.concurrent.atomic.AtomicLong();

  private volatile long lastSnapshotMs;
  private volatile long maxSnapshotMs;
  private volatile long lastSnapshotJobs;

  /** What {@code /metrics} shows of the snapshots: count, last and longest time, last size. */
  public record SnapshotStats(long written, long lastMs, long maxMs, long lastJobs) {}

  public SnapshotStats snapshotStats() {
    return new SnapshotStats(snapshots.get(), lastSnapshotMs, maxSnapshotMs, lastSnapshotJobs);
  }

  /**
   * Keeps the ended jobs the state forgets (a replica-local accounting store writes them durably);
   * called on the apply thread under the write lock, before the entry counts as applied. A failure
   * is fatal, as any failed apply: the replica stops rather than lose the jobs' records.
   */
  public interface ForgottenSink {
    void keep(ControlState state, List<io.kairos.control.state.JobRecord> jobs) throws Exception;
  }

  private volatile ForgottenSink forgottenSink = (state, jobs) -> {};

  /** Where forgotten jobs go; set before the replica starts. By default nowhere. */
  public void onForgotten(ForgottenSink sink) {
    this.forgottenSink = java.util.Objects.requireNonNull(sink, "sink");
  }

  /** This group's directory under DATA/raft: its files are tightened after each snapshot. */
  private volatile Path filesRoot;

  private volatile boolean warnedWideFiles;

  @Override
  public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage)
      throws IOException {
    super.initialize(server, groupId, raftStorage);
    storage.init(raftStorage);
    filesRoot = raftStorage.getStorageDir().getRoot().toPath();
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

  /** Registers the state's size and the snapshots' gauges ({@code /metrics}). */
  public void bindMetrics(io.micrometer.core.instrument.MeterRegistry meters) {
    io.micrometer.core.instrument.Gauge.builder(
            "kairos.jobs.in.state", this, m -> m.read(s -> (double) s.jobCount()))
        .description("jobs in the replicated state: live ones and ended ones not yet forgotten")
        .register(meters);
    io.micrometer.core.instrument.Gauge.builder(
            "kairos.snapshots.written", this, m -> m.snapshotStats().written())
        .description("snapshots this replica wrote since it started")
        .register(meters);
    io.micrometer.core.instrument.Gauge.builder(
            "kairos.snapshot.last.ms", this, m -> m.snapshotStats().lastMs())
        .description("the last snapshot's time from request to durable file, ms")
        .register(meters);
    io.micrometer.core.instrument.Gauge.builder(
            "kairos.snapshot.max.ms", this, m -> m.snapshotStats().maxMs())
        .description("the longest snapshot's time from request to durable file, ms")
        .register(meters);
    io.micrometer.core.instrument.Gauge.builder(
            "kairos.snapshot.last.jobs", this, m -> m.snapshotStats().lastJobs())
        .description("jobs in the last snapshot")
        .register(meters);
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

  /**
   * Applies one entry. Anything thrown here is a bug or a corrupt log: the process exits ({@link
   * Fatal}) rather than leave a replica that serves reads but never applies again.
   */
  @Override
  public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
    LogEntryProto entry = trx.getLogEntry();
    try {
      return CompletableFuture.completedFuture(apply(entry));
    } catch (Throwable e) {
      onFatal.accept("applying log entry " + entry.getIndex() + " failed", e);
      return CompletableFuture.failedFuture(e);
    }
  }

  private Message apply(LogEntryProto entry) throws Exception {
    ByteString data = entry.getStateMachineLogEntry().getLogData();
    ControlCommand command = CommandCodec.decode(data.toByteArray());
    ControlResult result;
    lock.writeLock().lock();
    try {
      result = state.apply(command);
      var forgotten = state.takeForgotten();
      if (!forgotten.isEmpty()) {
        // Before the entry counts as applied: no snapshot can leave them out before they are kept.
        forgottenSink.keep(state, forgotten);
      }
      updateLastAppliedTermIndex(entry.getTerm(), entry.getIndex());
    } finally {
      lock.writeLock().unlock();
    }
    shadow.apply(data);
    watch.changed();
    return Message.valueOf(ByteString.copyFrom(CommandCodec.encodeResult(result)));
  }

  /**
   * Snapshots without stalling the log: Ratis calls this on its apply thread, which only hands a
   * marker to the {@link ShadowState} (O(1): no copy of the state here, no lock); that thread takes
   * the image of its own copy of the state at this point of the log, and a background writer
   * encodes, fsyncs and renames it. It returns the index of the last snapshot that is durable on
   * disk; that is what Ratis may purge the log up to, so a crash mid-write loses nothing. Ratis
   * calls again while it is behind; a failed write is rethrown on the next call.
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
    TermIndex last = getLastAppliedTermIndex();
    if (last == null || last.getIndex() <= durableIndex) {
      return durableIndex;
    }
    TermIndex at = last;
    long t0 = System.nanoTime();
    writing =
        shadow
            .image()
            .thenAcceptAsync(
                copy -> {
                  long t1 = System.nanoTime();
                  try {
                    writeSnapshot(copy, at);
                  } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                  }
                  long ms = (System.nanoTime() - t0) / 1_000_000;
                  lastSnapshotMs = ms;
                  maxSnapshotMs = Math.max(maxSnapshotMs, ms);
                  lastSnapshotJobs = copy.jobs().size();
                  snapshots.incrementAndGet();
                  LOG.info(
                      "snapshot at index {}: {} jobs, copied off the apply thread {} ms after the"
                          + " request, written in {} ms",
                      at.getIndex(),
                      copy.jobs().size(),
                      (t1 - t0) / 1_000_000,
                      (System.nanoTime() - t1) / 1_000_000);
                },
                snapshotWriter);
    return durableIndex;
  }

  private void finishWrite() throws IOException {
    try {
      writing.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while writing a snapshot", e);
    } catch (java.util.concurrent.ExecutionException e) {
      Throwable cause = e.getCause();
      throw new IOException(
          "writing a snapshot failed",
          cause instanceof java.io.UncheckedIOException u ? u.getCause() : cause);
    } finally {
      writing = null;
    }
  }

  /**
   * Encodes the image straight into the temp file (never whole in memory: a large state's snapshot
   * would otherwise need twice its size of heap at once), then fsync and rename.
   */
  private void writeSnapshot(StateImage copy, TermIndex last) throws IOException {
    File target = storage.getSnapshotFile(last.getTerm(), last.getIndex());
    writeAtomically(
        target.toPath(), out -> CommandCodec.writeImage(copy, out, KairosStateMachine::pace));
    var md5 = MD5FileUtil.computeAndSaveMd5ForFile(target);
    storage.updateLatestSnapshot(
        new SingleFileSnapshotInfo(new FileInfo(target.toPath(), md5), last));
    durableIndex = last.getIndex();
    keepPrivate();
  }

  /**
   * Sets the log and snapshot files Ratis created since the last call to 0600 (it creates them with
   * the process umask); warns once when there were some, as the umask is then too wide.
   */
  private void keepPrivate() {
    Path root = filesRoot;
    if (root == null) {
      return;
    }
    List<String> widened;
    try {
      widened = PrivateFiles.tighten(root);
    } catch (IOException e) {
      // The snapshot is durable all the same; the next one tries again.
      LOG.warn("could not make the Raft files under {} private: {}", root, e.toString());
      return;
    }
    if (!widened.isEmpty() && !warnedWideFiles) {
      warnedWideFiles = true;
      LOG.warn(
          "the process umask let other accounts read new Raft files ({}): they are 0600 now, but"
              + " run the controller with umask 077 (./kairos does) so they never are",
          widened.get(0));
    }
  }

  /** Between chunks of a snapshot: a short sleep, so encoding takes at most about half a core. */
  private static void pace() {
    try {
      Thread.sleep(5);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Ratis shut this replica's Raft server down by itself ({@code allServer} is false): it
   * campaigned and learnt that it is not in the group's configuration (removed while it was away,
   * or started on an empty directory before a member added it). It then serves its last state
   * without applying more, so say what to do.
   */
  @Override
  public void notifyServerShutdown(
      org.apache.ratis.proto.RaftProtos.RoleInfoProto roleInfo, boolean allServer) {
    if (!allServer) {
      LOG.error(
          "the Raft server of this replica shut down: the group's leader says it is not a member"
              + " (removed, or started on an empty data directory before it was added). Stop it;"
              + " start it on an empty data directory with --join; then run `kairos replicas add"
              + " HOST:PORT` on a member (docs/operations.md, replacing a replica)");
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
      shadow.close();
      snapshotWriter.shutdown();
      super.close();
    }
  }

  /** {@code out}, except that closing it only flushes (the channel stays open for its fsync). */
  private static java.io.OutputStream unclosable(java.io.OutputStream out) {
    return new java.io.FilterOutputStream(out) {
      @Override
      public void write(byte[] b, int off, int len) throws IOException {
        out.write(b, off, len);
      }

      @Override
      public void close() throws IOException {
        out.flush();
      }
    };
  }

  /** What writes a file's content. */
  interface Content {
    void writeTo(java.io.OutputStream out) throws IOException;
  }

  /**
   * Temp file (created 0600), its content, fsync, atomic rename, fsync of the directory. Every
   * failure propagates.
   */
  static void writeAtomically(Path target, Content content) throws IOException {
    Path dir = target.getParent();
    Path tmp = dir.resolve(target.getFileName() + ".tmp");
    Files.deleteIfExists(tmp);
    var options = java.util.Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    try (FileChannel ch =
        PrivateFiles.supported()
            ? FileChannel.open(
                tmp,
                options,
                java.nio.file.attribute.PosixFilePermissions.asFileAttribute(PrivateFiles.FILE))
            : FileChannel.open(tmp, options)) {
      var out =
          new java.io.BufferedOutputStream(java.nio.channels.Channels.newOutputStream(ch), 1 << 16);
      content.writeTo(unclosable(out));
      out.flush();
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
    // The snapshot copy decodes its own objects from the same file (the two share nothing).
    shadow.reset(readState(path));
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

  private static ControlState readState(Path path) throws IOException {
    try (InputStream in = new BufferedInputStream(Files.newInputStream(path))) {
      return ControlState.of(CommandCodec.readImage(in));
    }
  }
}

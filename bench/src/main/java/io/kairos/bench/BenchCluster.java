package io.kairos.bench;

import io.kairos.core.command.Applied;
import io.kairos.core.command.Command;
import io.kairos.core.model.Cluster;
import io.kairos.core.model.GangSpec;
import io.kairos.core.model.Job;
import io.kairos.core.model.JobId;
import io.kairos.core.model.JobSpec;
import io.kairos.core.model.Placement;
import io.kairos.core.model.TaskShape;
import io.kairos.core.state.ClusterStore;
import io.kairos.core.state.Reducer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Builds a large, busy cluster state for the pass benchmark, deterministically from a seed.
 *
 * <p>The state is what a production controller sees between two passes: most GPUs held by running
 * jobs of a realistic size mix, the free GPUs scattered over partly used nodes (few whole nodes
 * free, so wide gangs at the head block and get a reservation), and a deep queue.
 *
 * <ul>
 *   <li>Cluster: {@code Cluster.uniform(nodes, gpusPerNode, 32, 8)}: racks of 32 nodes, blocks of 8
 *       racks, one zone.
 *   <li>Running jobs: sizes 1, 2, 4 GPUs (one node), whole nodes, and 2-8 node gangs ({@code
 *       GangSpec.perNode(gpus, gpusPerNode)}); the mix is drawn so that the GPUs held add up to
 *       about {@link #TARGET_BUSY} of the cluster. Gangs go into one rack when they can, whole-node
 *       jobs onto random free nodes, small jobs onto random nodes with room (random fit), which
 *       scatters the remaining free GPUs. Each started in the past and ends (at its time limit)
 *       between 1 minute and 3 days from now.
 *   <li>Pending jobs: the same kinds plus wide 8-32 node gangs (64-256 GPUs at 8 per node),
 *       submitted over the past 3 days, time limits 30 min to 3 days.
 * </ul>
 *
 * <p>Job ids follow submission order; pending jobs are submitted in that order (the store keeps
 * arrival order), running jobs are started in start order.
 */
public final class BenchCluster {
  public static final int NODES_PER_RACK = 32;
  public static final int RACKS_PER_BLOCK = 8;

  /** The pass's "now": 30 days after the time origin, so every past time is positive. */
  public static final long NOW_SEC = 30L * 86_400;

  /** Fraction of GPUs held by running jobs (the draw stays at or just below it). */
  public static final double TARGET_BUSY = 0.965;

  private static final long[] LIMITS = {
    1_800, 3_600, 7_200, 14_400, 28_800, 43_200, 86_400, 172_800, 259_200
  };
  private static final double[] LIMIT_WEIGHTS = {10, 15, 15, 15, 12, 10, 12, 7, 4};
  private static final String[] USERS = users(200);
  private static final String[] QUEUES = {"default", "research", "prod", "batch"};

  /** "nodes x gpusPerNode / pending / running", e.g. {@code 10000x8/100000/20000}. */
  public record Scale(int nodes, int gpusPerNode, int pending, int running) {
    public static Scale parse(String text) {
      String[] parts = text.trim().split("/");
      String[] shape = parts.length == 3 ? parts[0].split("x") : new String[0];
      if (shape.length != 2) {
        throw new IllegalArgumentException(
            "scale must look like NODESxGPUS/PENDING/RUNNING, got " + text);
      }
      return new Scale(
          Integer.parseInt(shape[0]),
          Integer.parseInt(shape[1]),
          Integer.parseInt(parts[1]),
          Integer.parseInt(parts[2]));
    }

    public long totalGpus() {
      return (long) nodes * gpusPerNode;
    }

    @Override
    public String toString() {
      return nodes + "x" + gpusPerNode + "/" + pending + "/" + running;
    }
  }

  /** One job before it has an id. */
  private static final class Plan {
    final GangSpec gang;
    final long limit;
    final long submit;
    long start = -1;
    int[] nodes;
    int[] tasks;
    long[] masks;
    Job job;

    Plan(GangSpec gang, long limit, long submit) {
      this.gang = gang;
      this.limit = limit;
      this.submit = submit;
    }
  }

  private final Scale scale;
  private final SplittableRandom rng;
  private final Cluster cluster;
  private final long[] free;
  private final int gpn;

  private BenchCluster(Scale scale, long seed) {
    this.scale = scale;
    this.rng = new SplittableRandom(seed);
    this.gpn = scale.gpusPerNode();
    if (gpn < 2 || gpn > 64 || Integer.bitCount(gpn) != 1) {
      throw new IllegalArgumentException("gpusPerNode must be a power of two in [2, 64]: " + gpn);
    }
    this.cluster = Cluster.uniform(scale.nodes(), gpn, NODES_PER_RACK, RACKS_PER_BLOCK);
    this.free = new long[scale.nodes()];
    Arrays.fill(free, gpn == 64 ? -1L : (1L << gpn) - 1);
  }

  /** A store holding the scale's running and pending jobs, built from {@code seed}. */
  public static ClusterStore build(Scale scale, long seed) {
    return build(scale, seed, false);
  }

  /**
   * {@link #build(Scale, long)}; with {@code tenancy}, each job's queue is one of {@link
   * BenchTenancy#QUEUES} and its account one of {@link BenchTenancy#ACCOUNTS} (from its id, so the
   * cluster state is the same as without).
   */
  public static ClusterStore build(Scale scale, long seed, boolean tenancy) {
    return new BenchCluster(scale, seed).build(tenancy);
  }

  private ClusterStore build(boolean tenancy) {
    var running = new ArrayList<Plan>(scale.running());
    long target = (long) Math.floor(TARGET_BUSY * scale.totalGpus());
    long held = 0;
    for (int j = 0; j < scale.running(); j++) {
      int remaining = scale.running() - j - 1;
      Plan p = runningPlan(target - held - remaining);
      held += p.gang.totalGpus();
      running.add(p);
    }
    placeRunning(running);
    var pending = new ArrayList<Plan>(scale.pending());
    for (int j = 0; j < scale.pending(); j++) {
      pending.add(pendingPlan());
    }

    // Ids in submission order (ties: running first, then draw order; the sort is stable).
    var all = new ArrayList<Plan>(running.size() + pending.size());
    all.addAll(running);
    all.addAll(pending);
    all.sort(Comparator.comparingLong(p -> p.submit));
    var store = new ClusterStore(cluster);
    long id = 1;
    for (Plan p : all) {
      var spec =
          new JobSpec(
              USERS[rng.nextInt(USERS.length)],
              QUEUES[rng.nextInt(QUEUES.length)],
              0,
              p.gang,
              p.limit,
              "");
      if (tenancy) {
        spec = BenchTenancy.assign(spec, id);
      }
      p.job = new Job(JobId.of(id++), spec, p.submit);
      must(store, new Command.SubmitJob(p.submit, p.job));
    }
    running.sort(Comparator.comparingLong(p -> p.start));
    for (Plan p : running) {
      must(
          store,
          new Command.StartJob(p.start, p.job.id(), Placement.of(p.nodes, p.tasks, p.masks)));
    }
    return store;
  }

  private static void must(ClusterStore store, Command command) {
    Applied applied = Reducer.apply(store, command);
    if (applied instanceof Applied.Refused(var reason)) {
      throw new IllegalStateException("bench state: " + command + " refused: " + reason);
    }
  }

  // --- Size mixes -------------------------------------------------------------------------

  /** A running job of at most {@code budget} GPUs (at least 1). */
  private Plan runningPlan(long budget) {
    double u = rng.nextDouble();
    int gpus;
    if (u < 0.46) {
      gpus = 1;
    } else if (u < 0.66) {
      gpus = 2;
    } else if (u < 0.80) {
      gpus = 4;
    } else if (u < 0.95) {
      gpus = gpn;
    } else if (u < 0.98) {
      gpus = 2 * gpn;
    } else if (u < 0.995) {
      gpus = 4 * gpn;
    } else {
      gpus = 8 * gpn;
    }
    while (gpus > budget && gpus > 1) {
      gpus /= 2; // sizes are powers of two times the node size, or 1, 2, 4
    }
    long limit = limit();
    // Started up to (limit - 60 s) ago, so it ends between 1 minute and `limit` from now, after
    // waiting up to 4 hours in the queue.
    long start = NOW_SEC - rng.nextLong(limit - 60);
    Plan p = new Plan(gang(gpus), limit, start - rng.nextLong(4 * 3_600));
    p.start = start;
    return p;
  }

  private Plan pendingPlan() {
    double u = rng.nextDouble();
    int gpus;
    if (u < 0.40) {
      gpus = 1;
    } else if (u < 0.52) {
      gpus = 2;
    } else if (u < 0.64) {
      gpus = 4;
    } else if (u < 0.80) {
      gpus = gpn;
    } else if (u < 0.92) {
      gpus = gpn << rng.nextInt(1, 4); // 2, 4 or 8 nodes: 16-64 GPUs at 8 per node
    } else {
      gpus = gpn << rng.nextInt(3, 6); // 8, 16 or 32 nodes: 64-256 GPUs at 8 per node
    }
    long submit = NOW_SEC - 1 - rng.nextLong(3 * 86_400);
    return new Plan(gang(gpus), limit(), submit);
  }

  /**
   * Jobs below one node are mostly one task of {@code gpus} GPUs, 30% "flexible" (1-GPU tasks that
   * may spread); a node or more is one task per node.
   */
  private GangSpec gang(int gpus) {
    if (gpus >= gpn) {
      return GangSpec.perNode(gpus, gpn);
    }
    if (gpus > 1 && rng.nextDouble() < 0.3) {
      return GangSpec.flexible(gpus);
    }
    return new GangSpec(1, TaskShape.gpus(gpus), false);
  }

  private long limit() {
    double total = 0;
    for (double w : LIMIT_WEIGHTS) {
      total += w;
    }
    double u = rng.nextDouble() * total;
    for (int i = 0; i < LIMITS.length; i++) {
      u -= LIMIT_WEIGHTS[i];
      if (u < 0) {
        return LIMITS[i];
      }
    }
    return LIMITS[LIMITS.length - 1];
  }

  // --- Placement of running jobs ------------------------------------------------------------

  private void placeRunning(List<Plan> running) {
    // Widest first: gangs while whole racks are free, then whole nodes, then small jobs.
    var order = new ArrayList<>(running);
    order.sort(Comparator.comparingInt((Plan p) -> -p.gang.totalGpus()));
    int n = scale.nodes();
    int[] open = null;
    int openCount = 0;
    for (Plan p : order) {
      int gpus = p.gang.totalGpus();
      if (gpus >= gpn) {
        int k = gpus / gpn;
        int[] nodes = k == 1 ? new int[] {randomFullNode()} : gangNodes(k);
        long[] masks = new long[k];
        int[] tasks = new int[k];
        for (int i = 0; i < k; i++) {
          masks[i] = free[nodes[i]];
          tasks[i] = 1;
          free[nodes[i]] = 0;
        }
        p.nodes = nodes;
        p.tasks = tasks;
        p.masks = masks;
        continue;
      }
      if (open == null) {
        open = new int[n];
        for (int i = 0; i < n; i++) {
          if (free[i] != 0) {
            open[openCount++] = i;
          }
        }
      }
      // Random fit: a random open node with room, else the first with room after a random one.
      int slot = -1;
      for (int attempt = 0; attempt < 64 && slot < 0; attempt++) {
        int s = rng.nextInt(openCount);
        if (Long.bitCount(free[open[s]]) >= gpus) {
          slot = s;
        }
      }
      if (slot < 0) {
        int from = rng.nextInt(openCount);
        for (int i = 0; i < openCount && slot < 0; i++) {
          int s = (from + i) % openCount;
          if (Long.bitCount(free[open[s]]) >= gpus) {
            slot = s;
          }
        }
      }
      if (slot < 0) {
        throw new IllegalStateException("bench state: no node has " + gpus + " free GPUs");
      }
      int node = open[slot];
      int tasks = p.gang.tasks();
      long mask = lowest(free[node], gpus);
      free[node] &= ~mask;
      if (free[node] == 0) {
        open[slot] = open[--openCount];
      }
      p.nodes = new int[] {node};
      p.tasks = new int[] {tasks};
      p.masks = new long[] {mask};
    }
  }

  /** The {@code count} lowest set bits of {@code mask} (GPUs are taken lowest index first). */
  private static long lowest(long mask, int count) {
    long taken = 0;
    long rest = mask;
    for (int i = 0; i < count; i++) {
      long bit = Long.lowestOneBit(rest);
      taken |= bit;
      rest &= ~bit;
    }
    return taken;
  }

  private boolean full(int node) {
    return Long.bitCount(free[node]) == gpn;
  }

  private int randomFullNode() {
    int n = scale.nodes();
    for (int attempt = 0; attempt < 64; attempt++) {
      int node = rng.nextInt(n);
      if (full(node)) {
        return node;
      }
    }
    int from = rng.nextInt(n);
    for (int i = 0; i < n; i++) {
      int node = (from + i) % n;
      if (full(node)) {
        return node;
      }
    }
    throw new IllegalStateException("bench state: no whole node free");
  }

  /** {@code k} whole free nodes: inside one random rack if possible, else one block, else any. */
  private int[] gangNodes(int k) {
    int n = scale.nodes();
    int rackSize = NODES_PER_RACK;
    int racks = (n + rackSize - 1) / rackSize;
    for (int attempt = 0; attempt < 32; attempt++) {
      int rack = rng.nextInt(racks);
      int[] nodes = fullNodesIn(rack * rackSize, Math.min(n, (rack + 1) * rackSize), k);
      if (nodes != null) {
        return nodes;
      }
    }
    int blockSize = rackSize * RACKS_PER_BLOCK;
    int blocks = (n + blockSize - 1) / blockSize;
    for (int attempt = 0; attempt < 16; attempt++) {
      int block = rng.nextInt(blocks);
      int[] nodes = fullNodesIn(block * blockSize, Math.min(n, (block + 1) * blockSize), k);
      if (nodes != null) {
        return nodes;
      }
    }
    int[] nodes = fullNodesIn(0, n, k);
    if (nodes == null) {
      throw new IllegalStateException("bench state: no " + k + " whole nodes free");
    }
    return nodes;
  }

  private int[] fullNodesIn(int from, int to, int k) {
    int[] nodes = new int[k];
    int found = 0;
    for (int node = from; node < to && found < k; node++) {
      if (full(node)) {
        nodes[found++] = node;
      }
    }
    return found == k ? nodes : null;
  }

  private static String[] users(int count) {
    String[] users = new String[count];
    for (int i = 0; i < count; i++) {
      users[i] = "user" + i;
    }
    return users;
  }

  /** A one-line description of a store: GPUs busy, free nodes by free count, queue sizes. */
  public static String describe(ClusterStore store) {
    var cluster = store.cluster();
    int maxGpus = cluster.maxGpusPerNode();
    int[] byFree = new int[maxGpus + 1];
    for (int i = 0; i < cluster.nodeCount(); i++) {
      byFree[Long.bitCount(store.freeMask(i))]++;
    }
    long total = cluster.totalGpus();
    return String.format(
        "nodes=%d gpus=%d busy=%.2f%% free=%d nodesByFreeGpus=%s pending=%d running=%d",
        cluster.nodeCount(),
        total,
        100.0 * (total - store.freeGpus()) / total,
        store.freeGpus(),
        Arrays.toString(byFree),
        store.pendingCount(),
        store.runningCount());
  }
}

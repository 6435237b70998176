package io.kairos.testkit;

import io.kairos.core.model.Cluster;
import io.kairos.core.model.GangSpec;
import io.kairos.core.model.JobSpec;
import io.kairos.core.model.NodeSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Seeded generators of clusters and workloads: the same seed gives the same case, so every property
 * failure can be replayed from the seed in its message.
 *
 * <p>Clusters: 1..64 nodes of 1, 2, 4 or 8 GPUs (uniform or mixed), NVLink domain sizes that divide
 * the GPU count, racks of 1..8 nodes, blocks of 1..4 racks, sometimes two zones; and edge shapes (a
 * single node with one GPU, a single node of 8 GPUs in NVLink domains, one node per rack).
 *
 * <p>Workloads: jobs with flexible or per-node gangs that fit the empty cluster, from one GPU to
 * the whole cluster; limits 1..10,000 s; runtimes 1..limit; arrival times all at 0 or spread; equal
 * priorities (0). Some jobs are held until a later eligible time, and some exclude one or two nodes
 * (or a name the cluster lacks) while still fitting the cluster without them: drawn from a second
 * stream, so the shapes, limits and arrivals of a seed are what they were before holds and
 * exclusions existed.
 */
public final class Generators {
  /** GPU counts per node the generator uses. */
  static final int[] GPU_COUNTS = {1, 2, 4, 8};

  /**
   * One job of a workload: when it arrives, what it asks for, how long it really runs, and from
   * when it may start ({@code atSec} unless held: a begin time, a requeue backoff).
   */
  public record Arrival(long atSec, JobSpec spec, long runtimeSec, long eligibleSec) {
    public Arrival(long atSec, JobSpec spec, long runtimeSec) {
      this(atSec, spec, runtimeSec, atSec);
    }

    @Override
    public String toString() {
      var g = spec.gang();
      return "@"
          + atSec
          + " "
          + (g.distinctNodes() ? "perNode " : "tasks ")
          + g.tasks()
          + "x"
          + g.shape().gpus()
          + " limit="
          + spec.timeLimitSec()
          + " run="
          + runtimeSec
          + (spec.priority() != 0 ? " prio=" + spec.priority() : "")
          + (eligibleSec > atSec ? " eligible=" + eligibleSec : "")
          + (spec.hasExclusions() ? " exclude=" + spec.excludedNodes() : "");
    }
  }

  /** A generated cluster and workload. */
  public record Case(long seed, Cluster cluster, List<Arrival> jobs) {
    public Case {
      jobs = List.copyOf(jobs);
    }

    public Case withJobs(List<Arrival> fewer) {
      return new Case(seed, cluster, fewer);
    }

    /** A harness over this case's cluster with every job submitted. */
    public SchedulerHarness harness(io.kairos.core.sched.Policy policy, RuntimeModel model) {
      var h = SchedulerHarness.of(cluster).policy(policy).seed(seed).runtimes(model);
      h.submitAll(jobs);
      return h;
    }

    @Override
    public String toString() {
      var sb =
          new StringBuilder("seed=")
              .append(seed)
              .append(" cluster: ")
              .append(Clusters.describe(cluster))
              .append("\n  ")
              .append(jobs.size())
              .append(" jobs:");
      for (int i = 0; i < jobs.size(); i++) {
        sb.append("\n    ").append(i + 1).append(": ").append(jobs.get(i));
      }
      return sb.toString();
    }
  }

  private final long seed;
  private final SplittableRandom random;
  private final SplittableRandom extras; // holds and exclusions

  private Generators(long seed) {
    this.seed = seed;
    this.random = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + 17);
    this.extras = new SplittableRandom(seed * 0xC2B2AE3D27D4EB4FL + 91);
  }

  public static Generators seeded(long seed) {
    return new Generators(seed);
  }

  public long seed() {
    return seed;
  }

  /** A random cluster of 1..64 nodes. */
  public Cluster cluster() {
    return cluster(1, 64);
  }

  /** A random cluster of {@code minNodes..maxNodes} nodes, with edge shapes now and then. */
  public Cluster cluster(int minNodes, int maxNodes) {
    int shape = random.nextInt(100);
    if (shape < 6 && minNodes <= 1) {
      return Cluster.of(List.of(Clusters.node("n0000", 1, 1, "z0", "b00", "r000")));
    }
    if (shape < 10 && minNodes <= 1) {
      int nv = pick(new int[] {2, 4, 8});
      return Cluster.of(List.of(Clusters.node("n0000", 8, nv, "z0", "b00", "r000")));
    }
    int n = skewed(minNodes, maxNodes);
    boolean uniformGpus = random.nextInt(100) < 70;
    int uniformCount = pick(GPU_COUNTS);
    boolean onePerRack = random.nextInt(100) < 8;
    boolean twoZones = n >= 2 && random.nextInt(100) < 10;
    var nodes = new ArrayList<NodeSpec>(n);
    int rack = 0;
    int block = 0;
    int racksInBlock = 0;
    int blockSize = 1 + random.nextInt(4);
    int left = 0;
    for (int i = 0; i < n; i++) {
      if (left == 0) {
        if (i > 0) {
          rack++;
          racksInBlock++;
          if (racksInBlock == blockSize) {
            block++;
            racksInBlock = 0;
            blockSize = 1 + random.nextInt(4);
          }
        }
        left = onePerRack ? 1 : 1 + random.nextInt(8);
      }
      left--;
      int gpus = uniformGpus ? uniformCount : pick(GPU_COUNTS);
      int nvlink = nvlinkSize(gpus);
      String zone = twoZones && i >= n / 2 ? "z1" : "z0";
      nodes.add(
          Clusters.node(
              String.format("n%04d", i),
              gpus,
              nvlink,
              zone,
              String.format("b%02d", block),
              String.format("r%03d", rack)));
    }
    return Cluster.of(nodes);
  }

  private int nvlinkSize(int gpus) {
    // A divisor of gpus; mostly the whole node.
    if (gpus == 1 || random.nextInt(100) < 60) {
      return gpus;
    }
    int size = gpus;
    int halvings = 1 + random.nextInt(Integer.numberOfTrailingZeros(gpus));
    for (int i = 0; i < halvings; i++) {
      size /= 2;
    }
    return size;
  }

  /** A random workload of 1..{@code maxJobs} jobs for {@code cluster}, sorted by arrival. */
  public List<Arrival> workload(Cluster cluster, int maxJobs) {
    int count = random.nextInt(100) < 10 ? 1 + random.nextInt(3) : 1 + random.nextInt(maxJobs);
    int arrivals = random.nextInt(100);
    long t = 0;
    var jobs = new ArrayList<Arrival>(count);
    for (int i = 0; i < count; i++) {
      if (arrivals >= 30 && i > 0) {
        t += gap();
      }
      JobSpec spec = withExclusions(cluster, job(cluster));
      jobs.add(new Arrival(t, spec, runtime(spec.timeLimitSec()), eligible(t)));
    }
    return jobs;
  }

  /**
   * A backlog: 1..{@code maxJobs} jobs that run exactly their time limits, all at t=0 or (when
   * {@code arriving}) arriving over time. Equal priorities.
   */
  public List<Arrival> backlog(Cluster cluster, int maxJobs, boolean arriving) {
    int count = 1 + random.nextInt(maxJobs);
    long t = 0;
    var jobs = new ArrayList<Arrival>(count);
    for (int i = 0; i < count; i++) {
      if (arriving && i > 0) {
        t += gap();
      }
      JobSpec spec = withExclusions(cluster, job(cluster));
      jobs.add(new Arrival(t, spec, spec.timeLimitSec(), eligible(t)));
    }
    return jobs;
  }

  /** A cluster of 1..64 nodes and a workload of up to {@code maxJobs} jobs. */
  public Case randomCase(int maxJobs) {
    Cluster c = cluster();
    return new Case(seed, c, workload(c, maxJobs));
  }

  /** A cluster of 1..64 nodes and a backlog of up to {@code maxJobs} jobs. */
  public Case backlogCase(int maxJobs, boolean arriving) {
    Cluster c = cluster();
    return new Case(seed, c, backlog(c, maxJobs, arriving));
  }

  /** A job that fits the empty cluster: flexible or per-node, up to the whole cluster. */
  public JobSpec job(Cluster cluster) {
    GangSpec gang = random.nextBoolean() ? flexibleGang(cluster) : perNodeGang(cluster);
    return new JobSpec("u", "default", 0, gang, limit(), "");
  }

  /** Now and then a job held past its arrival: a begin time or a requeue backoff. */
  private long eligible(long atSec) {
    int kind = extras.nextInt(100);
    if (kind < 8) {
      return atSec + 1 + extras.nextInt(200);
    }
    if (kind < 14) {
      // Round numbers, so that holds end when jobs end or reservations start.
      return atSec + 100L * (1 + extras.nextInt(20));
    }
    return atSec;
  }

  /**
   * Now and then the job excludes one or two nodes (as a requeue after a node failure does), or a
   * name no node has; only exclusions that leave the job fitting the empty cluster are kept.
   */
  public JobSpec withExclusions(Cluster cluster, JobSpec spec) {
    int kind = extras.nextInt(100);
    if (kind >= 15) {
      return spec;
    }
    var names = new java.util.TreeSet<String>();
    if (kind < 2) {
      names.add("no-such-node");
    } else {
      int count = 1 + extras.nextInt(2);
      for (int i = 0; i < count; i++) {
        names.add(cluster.node(extras.nextInt(cluster.nodeCount())).name());
      }
    }
    return cluster.canEverHold(spec.gang(), spec.gpuModel(), names)
        ? spec.withExcludedNodes(names)
        : spec;
  }

  private GangSpec flexibleGang(Cluster cluster) {
    int total = (int) cluster.totalGpus();
    int size = random.nextInt(100);
    int gpus;
    if (size < 8) {
      gpus = total;
    } else if (size < 15) {
      gpus = 1;
    } else if (size < 75) {
      gpus = 1 + random.nextInt(Math.min(total, cluster.maxGpusPerNode()));
    } else {
      gpus = 1 + random.nextInt(total);
    }
    if (random.nextInt(100) < 15) {
      // Several GPUs per task, tasks may share nodes.
      int perTask = pick(GPU_COUNTS);
      if (perTask <= cluster.maxGpusPerNode()) {
        int maxTasks = 0;
        for (int i = 0; i < cluster.nodeCount(); i++) {
          maxTasks += cluster.gpuCount(i) / perTask;
        }
        int tasks = Math.max(1, Math.min(maxTasks, Math.max(1, gpus / perTask)));
        return new GangSpec(tasks, io.kairos.core.model.TaskShape.gpus(perTask), false);
      }
    }
    return GangSpec.flexible(gpus);
  }

  private GangSpec perNodeGang(Cluster cluster) {
    int perNode;
    do {
      perNode = pick(GPU_COUNTS);
    } while (perNode > cluster.maxGpusPerNode());
    int holders = 0;
    for (int i = 0; i < cluster.nodeCount(); i++) {
      if (cluster.gpuCount(i) >= perNode) {
        holders++;
      }
    }
    int size = random.nextInt(100);
    int tasks;
    if (size < 10) {
      tasks = holders;
    } else if (size < 70) {
      tasks = 1 + random.nextInt(Math.min(holders, 4));
    } else {
      tasks = 1 + random.nextInt(holders);
    }
    return GangSpec.perNode(tasks * perNode, perNode);
  }

  private long limit() {
    int kind = random.nextInt(100);
    if (kind < 5) {
      return 10_000;
    }
    if (kind < 15) {
      return 1 + random.nextInt(10);
    }
    if (kind < 25) {
      // Round numbers, so that ends and reservation starts coincide often.
      return 100L * (1 + random.nextInt(10));
    }
    // Log-uniform in 1..10,000.
    return Math.max(1, Math.min(10_000, (long) Math.pow(10, random.nextDouble() * 4)));
  }

  private long runtime(long limit) {
    return random.nextInt(100) < 40 ? limit : 1 + random.nextLong(limit);
  }

  private long gap() {
    int kind = random.nextInt(100);
    if (kind < 35) {
      return 0;
    }
    if (kind < 85) {
      return 1 + random.nextInt(100);
    }
    return 1 + random.nextInt(2_000);
  }

  private int skewed(int min, int max) {
    // Small clusters are as likely as large ones: log-uniform over the range.
    double lo = Math.log(min);
    double hi = Math.log(max + 1);
    int n = (int) Math.floor(Math.exp(lo + random.nextDouble() * (hi - lo)));
    return Math.max(min, Math.min(max, n));
  }

  private int pick(int[] values) {
    return values[random.nextInt(values.length)];
  }
}

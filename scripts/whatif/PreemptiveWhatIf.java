import io.kairos.sim.trace.EstimateMode;
import io.kairos.sim.trace.GpuWorkload;
import io.kairos.sim.trace.Trace;
import io.kairos.sim.trace.TraceReaders;
import io.kairos.testkit.TextbookEasy;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.PriorityQueue;

/**
 * What-if for issue 16.2: how far could a <em>preemptive</em> policy go, if every job could
 * checkpoint? Not Kairos' scheduler: an idealised model written apart from it (as {@link
 * TextbookEasy} is), to bound what building preemption into the {@code kairos} policy could give
 * before building it. Run by {@code scripts/preemptive-what-if.sh}.
 *
 * <p>The machine is a count of GPUs (exact for the HPC traces' one-GPU nodes; for multi-GPU nodes
 * it ignores node boundaries, so it overstates what fits). At every instant at which a job ends,
 * arrives or finishes stopping (and at every whole hour while jobs wait, as priorities age): every
 * job in the system, running or waiting, is ordered; the order is filled greedily (a job that does
 * not fit in what is left is passed over); running jobs left out are preempted: they keep their
 * work, hold their GPUs for the checkpoint time, then wait again; waiting jobs that are in start as
 * soon as their GPUs are free.
 *
 * <p>The order, first to last: running jobs still within their protection after a start (and, with
 * {@code shield=true}, running jobs that had starved before they started); the promoted starving
 * jobs ({@code guard}); the rest by {@code order}, a running job's key made {@code hysteresis}
 * times better so that it is preempted only by a clearly more urgent job; ties by submit and index.
 *
 * <p>A job is starving once its wait (time in the system not running) reaches max(1 h, min(3 x
 * limit, bound)), as {@code kairos}' guard, or the bound itself with {@code abs=true}.
 *
 * <p>Arguments: {@code TRACE GPUS POLICY [key=value...]}; TRACE a trace file or {@code
 * gen:<--generate spec>}; POLICY {@code easy} (textbook EASY, no preemption: the baseline) or
 * {@code factor} (largest expansion factor first, as {@code kairos}) or {@code srpt} (shortest
 * remaining limit first, minus {@code alpha} x the wait so far). Keys: {@code bound} (seconds,
 * default 172800), {@code checkpoint} (seconds, default 60), {@code protect} (seconds, default 0),
 * {@code hysteresis} (default 1), {@code alpha} (default 0), {@code abs}, {@code shield}, {@code
 * guard} ({@code sticky}: the oldest starving job, waiting or running, until it ends; {@code
 * oldest}: the oldest starving waiting job; {@code all}: every starving job, oldest first, and with
 * {@code barrier=true} none after the first that does not fit), {@code estimates} ({@code
 * REQUESTED} or {@code ACTUAL}).
 *
 * <p>After every step the model checks that no GPU is held twice or lost, and at the end that every
 * job ran exactly its run time.
 *
 * <p>Prints one line: mean bounded slowdown (max(1, (wait + run) / max(run, 10 s)), as the
 * simulator), mean, p99 (nearest rank) and longest wait (end - submit - run: a preempted job also
 * waits while it is stopped and until it restarts), preemptions.
 */
public final class PreemptiveWhatIf {
  private enum Guard {
    STICKY,
    OLDEST,
    ALL
  }

  private static final int WAITING = 1;
  private static final int RUNNING = 2;
  private static final int STOPPING = 3;
  private static final int DONE = 4;

  private static final int END = 0;
  private static final int STOPPED = 1;
  private static final int WAKE = 2;

  // The jobs.
  private final int n;
  private final long[] submit;
  private final long[] run;
  private final long[] limit;
  private final int[] gpus;
  private final int total;

  // The policy.
  private String order = "factor";
  private long bound = 172_800;
  private long checkpoint = 60;
  private long protect = 0;
  private double hysteresis = 1;
  private double alpha = 0;
  private boolean abs;
  private boolean shield;
  private boolean barrier;
  private Guard guard = Guard.OLDEST;

  // The state.
  private final long[] attained;
  private final long[] segmentStart;
  private final long[] end;
  private final long[] preemptions;
  private final long[] token;
  private final byte[] state;
  private int promoted = -1;

  private PreemptiveWhatIf(List<io.kairos.sim.trace.TraceJob> jobs, int total) {
    this.n = jobs.size();
    this.total = total;
    submit = new long[n];
    run = new long[n];
    limit = new long[n];
    gpus = new int[n];
    for (int i = 0; i < n; i++) {
      var j = jobs.get(i);
      submit[i] = j.submitSec();
      run[i] = j.durationSec();
      limit[i] = Math.max(j.timeLimitSec(), j.durationSec());
      gpus[i] = j.gpus();
    }
    attained = new long[n];
    segmentStart = new long[n];
    end = new long[n];
    preemptions = new long[n];
    token = new long[n];
    state = new byte[n];
  }

  public static void main(String[] args) {
    if (args.length < 3) {
      System.err.println("usage: TRACE GPUS easy|factor|srpt [key=value...]");
      System.exit(2);
    }
    int total = Integer.parseInt(args[1]);
    var mode = EstimateMode.REQUESTED;
    for (int i = 3; i < args.length; i++) {
      if (args[i].startsWith("estimates=")) {
        mode = EstimateMode.valueOf(args[i].substring("estimates=".length()));
      }
    }
    Trace trace =
        args[0].startsWith("gen:")
            ? GpuWorkload.parse(args[0].substring(4)).generate(total, 8)
            : TraceReaders.read(Path.of(args[0]), TraceReaders.AUTO, mode);
    var jobs = trace.jobs().stream().filter(j -> j.gpus() <= total).toList();
    var sim = new PreemptiveWhatIf(jobs, total);
    if (args[2].equals("easy")) {
      var textbook = new ArrayList<TextbookEasy.Job>();
      for (int i = 0; i < sim.n; i++) {
        textbook.add(new TextbookEasy.Job(sim.submit[i], sim.gpus[i], sim.run[i], sim.limit[i]));
      }
      long[] starts = TextbookEasy.startTimes(textbook, total);
      for (int i = 0; i < sim.n; i++) {
        sim.end[i] = starts[i] + sim.run[i];
      }
    } else {
      sim.order = args[2];
      for (int i = 3; i < args.length; i++) {
        sim.set(args[i]);
      }
      sim.simulate();
    }
    System.out.println(
        String.join(" ", Arrays.asList(args).subList(2, args.length)) + ": " + sim.report());
  }

  private void set(String option) {
    int eq = option.indexOf('=');
    if (eq < 0) {
      throw new IllegalArgumentException("not key=value: " + option);
    }
    String key = option.substring(0, eq);
    String value = option.substring(eq + 1);
    switch (key) {
      case "bound" -> bound = Long.parseLong(value);
      case "checkpoint" -> checkpoint = Long.parseLong(value);
      case "protect" -> protect = Long.parseLong(value);
      case "hysteresis" -> hysteresis = Double.parseDouble(value);
      case "alpha" -> alpha = Double.parseDouble(value);
      case "abs" -> abs = Boolean.parseBoolean(value);
      case "shield" -> shield = Boolean.parseBoolean(value);
      case "barrier" -> barrier = Boolean.parseBoolean(value);
      case "guard" -> guard = Guard.valueOf(value.toUpperCase(Locale.ROOT));
      case "estimates" -> {} // read before the trace
      default -> throw new IllegalArgumentException("unknown key: " + key);
    }
  }

  private String report() {
    double slowdown = 0;
    long[] waits = new long[n];
    long preempted = 0;
    for (int i = 0; i < n; i++) {
      long response = end[i] - submit[i];
      waits[i] = response - run[i];
      slowdown += Math.max(1.0, (double) response / Math.max(run[i], 10));
      preempted += preemptions[i];
    }
    double meanWait = Arrays.stream(waits).average().orElse(0);
    Arrays.sort(waits);
    return String.format(
        Locale.ROOT,
        "jobs %d, mean bsld %.3f, mean wait %.0f s, p99 wait %d s, max wait %d s, preemptions %d",
        n,
        slowdown / n,
        meanWait,
        waits[(int) Math.ceil(0.99 * n) - 1],
        waits[n - 1],
        preempted);
  }

  private void simulate() {
    // {time, kind, job, token}: ends and stops are void once the job's token has moved on.
    var events =
        new PriorityQueue<long[]>(
            Comparator.<long[]>comparingLong(e -> e[0]).thenComparingLong(e -> e[1]));
    var active = new ArrayList<Integer>();
    int next = 0;
    int free = total;
    int done = 0;
    Integer[] ranked = new Integer[16];
    while (done < n) {
      long now = events.isEmpty() ? Long.MAX_VALUE : events.peek()[0];
      if (next < n) {
        now = Math.min(now, submit[next]);
      }
      while (!events.isEmpty() && events.peek()[0] == now) {
        long[] e = events.poll();
        int j = (int) e[2];
        if (e[1] == WAKE || e[3] != token[j]) {
          continue;
        }
        free += gpus[j];
        if (e[1] == END) {
          attained[j] += now - segmentStart[j];
          state[j] = DONE;
          end[j] = now;
          done++;
          active.remove(Integer.valueOf(j));
        } else {
          state[j] = WAITING;
        }
      }
      while (next < n && submit[next] == now) {
        state[next] = WAITING;
        active.add(next++);
      }
      if (ranked.length < active.size()) {
        ranked = new Integer[active.size() * 2];
      }
      int c = 0;
      int stopping = 0;
      for (int j : active) {
        if (state[j] == STOPPING) {
          stopping += gpus[j];
        } else {
          ranked[c++] = j;
        }
      }
      final long at = now;
      promoted = -1;
      if (guard != Guard.ALL) {
        for (int r = 0; r < c; r++) {
          int j = ranked[r];
          boolean eligible = guard == Guard.STICKY || state[j] == WAITING;
          if (eligible && pastBound(j, at) && (promoted < 0 || submit[j] < submit[promoted])) {
            promoted = j;
          }
        }
      }
      Arrays.sort(ranked, 0, c, (x, y) -> compare(x, y, at));
      // Fill greedily; the rest of the running jobs are preempted.
      boolean[] in = new boolean[c];
      int left = total - stopping;
      boolean barred = false;
      for (int r = 0; r < c; r++) {
        int j = ranked[r];
        boolean starving = barrier && !isProtected(j, at) && isPromoted(j, at);
        if (starving && barred) {
          continue;
        }
        if (gpus[j] <= left) {
          in[r] = true;
          left -= gpus[j];
        } else if (starving) {
          barred = true;
        }
      }
      for (int r = 0; r < c; r++) {
        int j = ranked[r];
        if (!in[r] && state[j] == RUNNING) {
          attained[j] += now - segmentStart[j];
          preemptions[j]++;
          token[j]++;
          if (checkpoint == 0) {
            state[j] = WAITING;
            free += gpus[j];
          } else {
            state[j] = STOPPING;
            events.add(new long[] {now + checkpoint, STOPPED, j, token[j]});
          }
        }
      }
      boolean waiting = false;
      for (int r = 0; r < c; r++) {
        int j = ranked[r];
        if (state[j] != WAITING) {
          continue;
        }
        if (in[r] && gpus[j] <= free) {
          state[j] = RUNNING;
          free -= gpus[j];
          segmentStart[j] = now;
          token[j]++;
          events.add(new long[] {now + run[j] - attained[j], END, j, token[j]});
          if (protect > 0) {
            events.add(new long[] {now + protect, WAKE, j, 0});
          }
        } else {
          waiting = true;
        }
      }
      if (waiting) {
        events.add(new long[] {(now / 3600 + 1) * 3600, WAKE, 0, 0});
      }
      check(active, free, now);
    }
    for (int j = 0; j < n; j++) {
      if (attained[j] != run[j] || end[j] < submit[j] + run[j]) {
        throw new IllegalStateException("job " + j + " ran " + attained[j] + " of " + run[j]);
      }
    }
  }

  /** The model's own invariant, after every step: no GPU held twice, none lost. */
  private void check(List<Integer> active, int free, long now) {
    int held = 0;
    for (int j : active) {
      if (state[j] == RUNNING || state[j] == STOPPING) {
        held += gpus[j];
      }
    }
    if (free < 0 || held + free != total) {
      throw new IllegalStateException(
          "at " + now + ": " + held + " GPUs held and " + free + " free of " + total);
    }
  }

  private int compare(int x, int y, long now) {
    boolean px = isProtected(x, now);
    if (px != isProtected(y, now)) {
      return px ? -1 : 1;
    }
    boolean sx = isPromoted(x, now);
    if (sx != isPromoted(y, now)) {
      return sx ? -1 : 1;
    }
    if (!sx) {
      int c = Double.compare(key(x, now), key(y, now));
      if (c != 0) {
        return c;
      }
    }
    int c = Long.compare(submit[x], submit[y]);
    return c != 0 ? c : Integer.compare(x, y);
  }

  private boolean isProtected(int j, long now) {
    return state[j] == RUNNING
        && (now - segmentStart[j] < protect || (shield && pastBound(j, now)));
  }

  private boolean isPromoted(int j, long now) {
    return guard == Guard.ALL ? pastBound(j, now) : j == promoted;
  }

  private long waited(int j, long now) {
    return now - submit[j] - attained(j, now);
  }

  private long attained(int j, long now) {
    return attained[j] + (state[j] == RUNNING ? now - segmentStart[j] : 0);
  }

  private boolean pastBound(int j, long now) {
    long w = waited(j, now);
    return abs ? w >= bound : w >= Math.max(3600, Math.min(3 * limit[j], bound));
  }

  /** Smaller first. */
  private double key(int j, long now) {
    double remaining = Math.max(1, limit[j] - attained(j, now));
    double key =
        switch (order) {
          case "srpt" -> remaining - alpha * waited(j, now);
          case "factor" -> -(waited(j, now) + remaining) / remaining;
          default -> throw new IllegalArgumentException("unknown policy: " + order);
        };
    if (state[j] == RUNNING && hysteresis != 1) {
      key = key < 0 ? key * hysteresis : key / hysteresis;
    }
    return key;
  }
}

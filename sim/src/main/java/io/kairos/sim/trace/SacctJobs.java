package io.kairos.sim.trace;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.TreeMap;

/**
 * The second half of {@link SacctReader}: turns the allocation lines it kept into trace jobs, in
 * numbered steps. The rules are in {@link SacctReader}'s class comment.
 */
final class SacctJobs {
  private SacctJobs() {}

  static Trace build(
      List<SacctReader.Row> rows, SacctReader.Summary summary, String source, EstimateMode mode) {
    // 1. Group: a heterogeneous job's components become one unit; every other line is its own.
    var units = new ArrayList<List<SacctReader.Row>>();
    var hetUnits = new HashMap<Long, List<SacctReader.Row>>();
    int hetComponents = 0;
    for (var row : rows) {
      if (row.hetBase() < 0) {
        units.add(List.of(row));
        continue;
      }
      hetComponents++;
      var unit = hetUnits.get(row.hetBase());
      if (unit == null) {
        unit = new ArrayList<>();
        hetUnits.put(row.hetBase(), unit);
        units.add(unit);
      }
      unit.add(row);
    }

    // 2. Ids: array tasks without JobIDRaw are numbered after the largest id, in file order.
    long next = summary.largestId() + 1;
    long firstNumbered = next;
    var ids = new long[units.size()];
    var lines = new LinkedHashMap<Long, Long>();
    for (int u = 0; u < units.size(); u++) {
      var first = units.get(u).getFirst();
      ids[u] = first.id() > 0 ? first.id() : next++;
      Long earlier = lines.putIfAbsent(ids[u], first.line());
      if (earlier != null) {
        throw new TraceFormatException(
            source,
            first.line(),
            SacctColumns.JOB_ID,
            "job id "
                + ids[u]
                + " ('"
                + first.jobId()
                + "') was already used on line "
                + earlier
                + " (sacct --duplicates lists requeued jobs more than once; leave it out)");
      }
    }

    // 3. GPUs: CPUs stand in for GPUs only when no job in the file has a GPU.
    boolean cpusAsGpus = !units.isEmpty() && rows.stream().noneMatch(r -> r.gpus() > 0);

    // 4. One trace job per unit.
    var jobs = new ArrayList<TraceJob>(units.size());
    var submits = new long[units.size()];
    long origin = Long.MAX_VALUE;
    int cpuOnly = 0;
    int cpuOnlyRows = 0;
    int uneven = 0;
    int withLimit = 0;
    int raised = 0;
    var models = new TreeMap<String, Integer>();
    var states = new TreeMap<String, Integer>();
    for (int u = 0; u < units.size(); u++) {
      var unit = units.get(u);
      var first = unit.getFirst();
      long submit = Long.MAX_VALUE;
      long duration = 0;
      long limit = 0;
      long gpus = 0;
      int perNode = -1; // -1: no GPU component seen yet; 0: none common
      var model = "";
      SacctReader.Row named = null; // user and partition: the first component with GPUs
      for (var row : unit) {
        submit = Math.min(submit, row.submitEpochSec());
        duration = Math.max(duration, row.durationSec());
        limit = Math.max(limit, row.limitSec());
        int rowGpus = cpusAsGpus ? Math.max(0, row.cpus()) : Math.max(0, row.gpus());
        if (cpusAsGpus && row.cpus() < 0) {
          throw new TraceFormatException(
              source,
              row.line(),
              SacctColumns.NCPUS,
              "no job in the file has GPUs, so CPUs stand for GPUs, but this job has no CPU"
                  + " count: add NCPUS to --format");
        }
        if (rowGpus == 0) {
          continue;
        }
        gpus += rowGpus;
        named = named == null ? row : named;
        int rowPerNode =
            cpusAsGpus || row.nodes() <= 0 || rowGpus % row.nodes() != 0
                ? 0
                : rowGpus / row.nodes();
        perNode = perNode < 0 || perNode == rowPerNode ? rowPerNode : 0;
        if (!row.model().isEmpty()) {
          model = model.isEmpty() || model.equals(row.model()) ? row.model() : "mixed";
        }
      }
      if (gpus > Integer.MAX_VALUE) {
        throw new TraceFormatException(
            source,
            first.line(),
            SacctColumns.JOB_ID,
            "heterogeneous job " + ids[u] + " has " + gpus + " GPUs in all: too many");
      }
      if (gpus == 0) {
        cpuOnly++;
        cpuOnlyRows += unit.size();
        continue;
      }
      if (perNode <= 0) {
        perNode = 0;
        if (!cpusAsGpus) {
          uneven++;
        }
      }
      duration = Math.max(1, duration);
      if (limit > 0) {
        withLimit++;
      }
      if (mode == EstimateMode.ACTUAL || limit == 0) {
        limit = duration;
      } else if (limit < duration) {
        limit = duration;
        raised++;
      }
      if (!cpusAsGpus) {
        models.merge(model.isEmpty() ? "no model given" : model, 1, Integer::sum);
      }
      if (!named.state().isEmpty()) {
        states.merge(named.state(), 1, Integer::sum);
      }
      origin = Math.min(origin, submit);
      submits[jobs.size()] = submit;
      jobs.add(
          new TraceJob(
              ids[u], 0, (int) gpus, duration, limit, named.user(), named.queue(), 0, perNode));
    }
    for (int j = 0; j < jobs.size(); j++) {
      var job = jobs.get(j);
      jobs.set(
          j,
          new TraceJob(
              job.id(),
              submits[j] - origin,
              job.gpus(),
              job.durationSec(),
              job.timeLimitSec(),
              job.user(),
              job.queue(),
              job.priority(),
              job.gpusPerNode()));
    }
    jobs.sort(Comparator.comparingLong(TraceJob::submitSec).thenComparingLong(TraceJob::id));

    // 5. Notes, in a fixed order: what was skipped, how jobs were shaped, then estimates.
    var notes = new ArrayList<String>();
    if (summary.steps() > 0) {
      notes.add(
          summary.steps()
              + " job steps skipped: only allocations are replayed (sacct --allocations leaves"
              + " them out)");
    }
    if (summary.neverStarted() > 0) {
      notes.add(
          summary.neverStarted()
              + " jobs never started (pending, or cancelled before they started): skipped");
    }
    if (summary.stillRunning() > 0) {
      notes.add(summary.stillRunning() + " jobs were still running (no End): skipped");
    }
    if (cpuOnly > 0) {
      notes.add(cpuOnly + " jobs have no GPUs (no gres/gpu in AllocTRES or ReqTRES): skipped");
    }
    if (cpusAsGpus) {
      notes.add(
          "no job has GPUs (no gres/gpu in AllocTRES or ReqTRES; does the site set"
              + " AccountingStorageTRES=gres/gpu?): each CPU is one GPU of the simulated cluster,"
              + " packed anywhere");
    }
    if (hetComponents > 0) {
      notes.add(
          hetUnits.size()
              + " heterogeneous jobs ("
              + hetComponents
              + " components) each replayed as one job");
    }
    if (next > firstNumbered) {
      notes.add(
          (next - firstNumbered)
              + " array tasks have no JobIDRaw: numbered from "
              + firstNumbered
              + " (add JobIDRaw to --format to keep Slurm's ids)");
    }
    if (uneven > 0) {
      notes.add(
          uneven
              + " jobs have GPUs that do not divide evenly over their nodes (or no node count):"
              + " their GPUs may be placed anywhere");
    }
    if (summary.eligibleLater() > 0) {
      notes.add(
          summary.eligibleLater()
              + " jobs became eligible after they were submitted (dependencies, --begin, holds):"
              + " replayed from Submit");
    }
    if (models.size() > 1 || (models.size() == 1 && !models.containsKey("no model given"))) {
      notes.add(
          "GPU models (not simulated: any GPU of the cluster serves any job): " + counts(models));
    }
    if (!states.isEmpty()) {
      notes.add("end states of the jobs replayed: " + counts(states));
    }
    var estimates = EstimateNotes.of(mode, jobs.size(), withLimit, raised, "time limit");
    notes.addAll(estimates.notes());
    int dropped = summary.steps() + summary.neverStarted() + summary.stillRunning() + cpuOnlyRows;
    return new Trace(
        source,
        SacctReader.FORMAT,
        jobs,
        summary.rowsRead(),
        dropped,
        estimates.fromRuntime(),
        notes);
  }

  /** Counts by name in name order, as "a 3, b 1". */
  private static String counts(TreeMap<String, Integer> counts) {
    var sb = new StringBuilder();
    counts.forEach(
        (name, n) -> {
          if (!sb.isEmpty()) {
            sb.append(", ");
          }
          sb.append(name).append(' ').append(n);
        });
    return sb.toString();
  }
}

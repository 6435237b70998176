package io.kairos.agent.gpu;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * Finds the node's GPUs with nvidia-smi and builds a {@link GpuInventory}.
 *
 * <p>Steps:
 *
 * <ol>
 *   <li>{@code nvidia-smi -q -x}, the richest report (thresholds, remapped rows).
 *   <li>If it exits non-zero or prints what {@link SmiXmlParser} rejects, the CSV query. A timeout
 *       or a binary that will not start gets no fallback: the second run would fail the same way,
 *       only later.
 *   <li>{@code nvidia-smi topo -m} for the NVLink domains. Its failure is a warning, not an error:
 *       the inventory then has no topology and a domain size of 1.
 * </ol>
 *
 * <p>{@link #run()} never throws: a failure is a {@link Result.Failed} value that the health
 * checker can read (lost-GPU lines, exit code). {@link #discover()} turns it into an {@link
 * NvidiaSmiException} for registration. Thread-safe; each call runs fresh processes.
 */
public final class Discovery {
  private final NvidiaSmi smi;

  public Discovery(NvidiaSmi smi) {
    this.smi = Objects.requireNonNull(smi, "smi");
  }

  /** What one discovery produced. */
  public sealed interface Result {
    /** nvidia-smi answered; {@code inventory.warnings()} holds what went wrong on the side. */
    record Found(GpuInventory inventory) implements Result {}

    /**
     * nvidia-smi did not tell us the GPUs.
     *
     * @param message names the command, its exit code and first stderr line
     * @param output everything the failed runs printed (stdout and stderr), for lost-GPU lines
     */
    record Failed(String message, String output) implements Result {
      public Failed {
        Objects.requireNonNull(message, "message");
        Objects.requireNonNull(output, "output");
      }
    }
  }

  /**
   * The inventory, for registration.
   *
   * @throws NvidiaSmiException with {@link Result.Failed#message()} when discovery failed
   */
  public GpuInventory discover() throws NvidiaSmiException {
    return switch (run()) {
      case Result.Found(var inventory) -> inventory;
      case Result.Failed(var message, _) -> throw new NvidiaSmiException(message);
    };
  }

  /** Runs discovery; never throws for nvidia-smi trouble. */
  public Result run() {
    // 1. The XML report.
    CommandResult xml;
    try {
      xml = smi.queryXml();
    } catch (IOException e) {
      return new Result.Failed(e.getMessage(), "");
    }
    if (xml.timedOut()) {
      return new Result.Failed(
          xml.describeFailure() + " after " + smi.timeout().toMillis() + " ms", output(xml));
    }
    List<String> warnings = new ArrayList<>(stderrLines(xml));
    String driver = "";
    List<GpuDetails> gpus;
    String xmlProblem = null;
    if (!xml.isSuccess()) {
      xmlProblem = xml.describeFailure();
      gpus = List.of();
    } else {
      try {
        SmiXmlParser.Report report = SmiXmlParser.parse(xml.stdout());
        driver = report.driverVersion();
        gpus = report.gpus();
      } catch (IllegalArgumentException e) {
        xmlProblem = "nvidia-smi -q -x printed unusable output: " + e.getMessage();
        gpus = List.of();
      }
    }

    // 2. The CSV fallback.
    if (xmlProblem != null) {
      CommandResult csv;
      try {
        csv = smi.queryCsv();
      } catch (IOException e) {
        return new Result.Failed(xmlProblem + " (fallback: " + e.getMessage() + ")", output(xml));
      }
      String csvProblem = null;
      if (!csv.isSuccess()) {
        csvProblem = shortFailure(csv, xml);
      } else {
        try {
          gpus = QueryCsvParser.parse(csv.stdout());
        } catch (IllegalArgumentException e) {
          csvProblem = "unusable output: " + e.getMessage();
        }
      }
      if (csvProblem != null) {
        return new Result.Failed(
            xmlProblem + " (the --query-gpu fallback also failed: " + csvProblem + ")",
            output(xml) + output(csv));
      }
      warnings.add(xmlProblem + "; used the --query-gpu fallback");
      warnings.addAll(stderrLines(csv));
    }

    // 3. The topology.
    Topology topology = Topology.EMPTY;
    if (!gpus.isEmpty()) {
      topology = topology(warnings);
      Set<Integer> listed = new TreeSet<>(topology.gpus());
      Set<Integer> found = new TreeSet<>(gpus.stream().map(GpuDetails::index).toList());
      if (topology != Topology.EMPTY && !listed.equals(found)) {
        warnings.add("nvidia-smi topo -m lists GPUs " + listed + " but the query found " + found);
      }
    }
    try {
      return new Result.Found(GpuInventory.of(driver, gpus, topology, warnings));
    } catch (IllegalArgumentException e) {
      return new Result.Failed(
          "nvidia-smi reported an impossible inventory: " + e.getMessage(), "");
    }
  }

  private Topology topology(List<String> warnings) {
    CommandResult topo;
    try {
      topo = smi.topology();
    } catch (IOException e) {
      warnings.add(e.getMessage() + "; NVLink domains unknown");
      return Topology.EMPTY;
    }
    if (!topo.isSuccess()) {
      warnings.add(topo.describeFailure() + "; NVLink domains unknown");
      return Topology.EMPTY;
    }
    try {
      return Topology.parse(topo.stdout());
    } catch (IllegalArgumentException e) {
      warnings.add(e.getMessage() + "; NVLink domains unknown");
      return Topology.EMPTY;
    }
  }

  // "exited 9" when the fallback failed like the first run did, with its own line otherwise.
  private static String shortFailure(CommandResult fallback, CommandResult first) {
    if (fallback.timedOut()) {
      return "timed out";
    }
    String line = fallback.firstErrorLine();
    boolean same = line.isEmpty() || line.equals(first.firstErrorLine());
    return "exited " + fallback.exitCode() + (same ? "" : ": " + line);
  }

  private static List<String> stderrLines(CommandResult result) {
    return result.stderr().lines().map(String::strip).filter(l -> !l.isEmpty()).toList();
  }

  private static String output(CommandResult result) {
    return result.stdout() + "\n" + result.stderr() + "\n";
  }
}

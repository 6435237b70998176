package io.kairos.agent.gpu;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The GPU-to-GPU part of {@code nvidia-smi topo -m}: which GPUs talk over NVLink and which over
 * PCIe, plus each GPU's CPU and NUMA affinity when the driver prints them.
 *
 * <p>The output is a tab-separated matrix whose header names the device columns ({@code GPU0..n},
 * then NICs as {@code NIC0} or {@code mlx5_0}) and then information columns ({@code CPU Affinity},
 * {@code NUMA Affinity}, {@code GPU NUMA ID}); a legend follows. A worked example (4 PCIe GPUs in
 * two NVLink-bridged pairs):
 *
 * <pre>
 *         GPU0    GPU1    GPU2    GPU3    CPU Affinity    NUMA Affinity
 * GPU0     X      NV12    SYS     SYS     0-31            0
 * GPU1    NV12     X      SYS     SYS     0-31            0
 * </pre>
 *
 * Only GPU rows and GPU columns are kept; NIC rows and columns and the legend are skipped.
 * Information cells are matched to their headers in order after empty cells are dropped, because
 * nvidia-smi pads them with extra tabs. Immutable.
 *
 * @param gpus the GPU indexes of the matrix, in column order
 * @param links {@code links.get(r).get(c)} joins {@code gpus[r]} and {@code gpus[c]}
 * @param cpuAffinity GPU index to its CPU list (e.g. {@code 0-51,104-155}); absent when not printed
 *     or {@code N/A}
 * @param numaAffinity GPU index to its NUMA node list; absent when not printed or {@code N/A}
 */
public record Topology(
    List<Integer> gpus,
    List<List<Link>> links,
    Map<Integer, String> cpuAffinity,
    Map<Integer, String> numaAffinity) {
  /** No matrix: nothing known about links (a node with no GPUs, or {@code topo -m} failed). */
  public static final Topology EMPTY = new Topology(List.of(), List.of(), Map.of(), Map.of());

  private static final Pattern GPU_NAME = Pattern.compile("GPU(\\d+)");
  private static final Pattern NVLINK = Pattern.compile("NV(\\d+)");
  private static final Pattern ANSI = Pattern.compile("\u001B\\[[0-9;]*m");

  public Topology {
    gpus = List.copyOf(gpus);
    links = links.stream().map(List::copyOf).toList();
    cpuAffinity = Map.copyOf(cpuAffinity);
    numaAffinity = Map.copyOf(numaAffinity);
    if (links.size() != gpus.size()) {
      throw new IllegalArgumentException(
          "topology: " + links.size() + " rows for " + gpus.size() + " GPUs");
    }
    for (List<Link> row : links) {
      if (row.size() != gpus.size()) {
        throw new IllegalArgumentException(
            "topology: a row has " + row.size() + " cells for " + gpus.size() + " GPUs");
      }
    }
  }

  /** How two devices are connected, from closest to farthest. */
  public enum Kind {
    /** {@code X}: the device itself. */
    SELF,
    /** {@code NV#}: a bonded set of # NVLinks (directly or through NVSwitch). */
    NVLINK,
    /** {@code PIX}: at most one PCIe bridge. */
    PIX,
    /** {@code PXB}: several PCIe bridges, no host bridge. */
    PXB,
    /** {@code PHB}: through a PCIe host bridge (the CPU). */
    PHB,
    /** {@code NODE}: between host bridges within one NUMA node. */
    NODE,
    /** {@code SYS} (or the older {@code SOC}): across the interconnect between NUMA nodes. */
    SYS,
    /** Anything else a future driver may print. */
    UNKNOWN
  }

  /**
   * One matrix cell.
   *
   * @param kind the connection
   * @param nvlinks the number of bonded NVLinks when {@code kind} is {@link Kind#NVLINK}, else 0
   */
  public record Link(Kind kind, int nvlinks) {
    public Link {
      Objects.requireNonNull(kind, "kind");
      if ((kind == Kind.NVLINK) != (nvlinks > 0)) {
        throw new IllegalArgumentException("link: " + kind + " with " + nvlinks + " NVLinks");
      }
    }

    /** Reads a cell: {@code X}, {@code NV1}..{@code NV18}, {@code PIX}, ... */
    public static Link parse(String cell) {
      String c = cell.strip().toUpperCase(Locale.ROOT);
      Matcher nv = NVLINK.matcher(c);
      if (nv.matches()) {
        int n = Integer.parseInt(nv.group(1));
        return n > 0 ? new Link(Kind.NVLINK, n) : new Link(Kind.UNKNOWN, 0);
      }
      Kind kind =
          switch (c) {
            case "X" -> Kind.SELF;
            case "PIX" -> Kind.PIX;
            case "PXB" -> Kind.PXB;
            case "PHB" -> Kind.PHB;
            case "NODE" -> Kind.NODE;
            case "SYS", "SOC" -> Kind.SYS;
            default -> Kind.UNKNOWN;
          };
      return new Link(kind, 0);
    }

    public boolean isNvlink() {
      return kind == Kind.NVLINK;
    }
  }

  /** The link between GPU indexes {@code a} and {@code b}; UNKNOWN when either is not listed. */
  public Link link(int a, int b) {
    int row = gpus.indexOf(a);
    int col = gpus.indexOf(b);
    if (row < 0 || col < 0) {
      return new Link(Kind.UNKNOWN, 0);
    }
    return links.get(row).get(col);
  }

  /**
   * Parses {@code nvidia-smi topo -m} output.
   *
   * @throws IllegalArgumentException when there is no GPU header, a GPU row is missing or short, or
   *     the diagonal is not {@code X}
   */
  public static Topology parse(String text) {
    List<String> lines = new ArrayList<>();
    for (String line : ANSI.matcher(text).replaceAll("").split("\\R")) {
      if (line.strip().startsWith("Legend")) {
        break;
      }
      if (!line.isBlank()) {
        lines.add(line);
      }
    }
    if (lines.isEmpty()) {
      throw new IllegalArgumentException("topo -m: empty output");
    }
    String headerLine = lines.getFirst();
    List<String> header = splitHeader(headerLine);
    // Device columns have one-word names; information columns ("CPU Affinity") have spaces.
    int deviceColumns = 0;
    while (deviceColumns < header.size() && !header.get(deviceColumns).contains(" ")) {
      deviceColumns++;
    }
    List<String> infoHeaders = header.subList(deviceColumns, header.size());
    List<Integer> gpuColumns = new ArrayList<>(); // positions in the device columns
    List<Integer> gpus = new ArrayList<>();
    for (int c = 0; c < deviceColumns; c++) {
      Matcher m = GPU_NAME.matcher(header.get(c));
      if (m.matches()) {
        gpuColumns.add(c);
        gpus.add(Integer.parseInt(m.group(1)));
      }
    }
    if (gpus.isEmpty()) {
      throw new IllegalArgumentException(
          "topo -m: no GPU columns in the header '" + headerLine.strip() + "'");
    }
    Map<Integer, List<Link>> rows = new HashMap<>();
    Map<Integer, String> cpu = new HashMap<>();
    Map<Integer, String> numa = new HashMap<>();
    for (String line : lines.subList(1, lines.size())) {
      List<String> cells = splitRow(line);
      Matcher m = GPU_NAME.matcher(cells.getFirst());
      if (!m.matches()) {
        continue; // a NIC row
      }
      int gpu = Integer.parseInt(m.group(1));
      if (cells.size() < 1 + deviceColumns) {
        throw new IllegalArgumentException(
            "topo -m: row GPU"
                + gpu
                + " has "
                + (cells.size() - 1)
                + " cells, expected "
                + deviceColumns
                + ": '"
                + line.strip()
                + "'");
      }
      List<Link> row = new ArrayList<>();
      for (int c : gpuColumns) {
        row.add(Link.parse(cells.get(1 + c)));
      }
      rows.put(gpu, row);
      List<String> info =
          cells.subList(1 + deviceColumns, cells.size()).stream()
              .filter(s -> !s.isBlank())
              .toList();
      for (int i = 0; i < Math.min(info.size(), infoHeaders.size()); i++) {
        String value = info.get(i).strip();
        if (SmiValues.isMissing(value)) {
          continue;
        }
        switch (infoHeaders.get(i)) {
          case "CPU Affinity" -> cpu.put(gpu, value);
          case "NUMA Affinity", "NUMA" -> numa.put(gpu, value);
          default -> {} // GPU NUMA ID and future columns
        }
      }
    }
    List<List<Link>> links = new ArrayList<>();
    for (int i = 0; i < gpus.size(); i++) {
      int gpu = gpus.get(i);
      List<Link> row = rows.get(gpu);
      if (row == null) {
        throw new IllegalArgumentException("topo -m: no row for GPU" + gpu);
      }
      if (row.get(i).kind() != Kind.SELF) {
        throw new IllegalArgumentException(
            "topo -m: GPU" + gpu + " to itself is " + row.get(i) + ", expected X");
      }
      links.add(row);
    }
    return new Topology(gpus, links, cpu, numa);
  }

  // Real output is tab-separated; text pasted by hand uses runs of spaces, where a header name
  // such as "CPU Affinity" holds a single space.
  private static List<String> splitHeader(String line) {
    String[] cells = line.contains("\t") ? line.split("\t") : line.strip().split("\\s{2,}");
    return java.util.Arrays.stream(cells).map(String::strip).filter(s -> !s.isEmpty()).toList();
  }

  private static List<String> splitRow(String line) {
    if (line.contains("\t")) {
      return java.util.Arrays.stream(line.split("\t", -1)).map(String::strip).toList();
    }
    return List.of(line.strip().split("\\s+"));
  }
}

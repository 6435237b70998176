package io.kairos.agent.gpu;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Parses the output of {@code nvidia-smi --query-gpu=}{@value NvidiaSmi#QUERY_FIELDS} {@code
 * --format=csv,noheader,nounits}: one line per GPU, eight comma-separated fields, e.g.
 *
 * <pre>0, GPU-5d3b..., NVIDIA H100 80GB HBM3, 81559, 00000000:18:00.0, 33, 0, No</pre>
 *
 * <p>The CSV query reports no temperature thresholds and no row remapping state; those readings
 * stay {@link GpuDetails#UNKNOWN} or false. It is the fallback when {@code -q -x} is unusable.
 * Pure.
 */
public final class QueryCsvParser {
  private static final int FIELDS = 8;

  private QueryCsvParser() {}

  /**
   * @throws IllegalArgumentException naming the line when a line does not have the eight fields or
   *     a number does not parse
   */
  public static List<GpuDetails> parse(String csv) {
    List<GpuDetails> gpus = new ArrayList<>();
    int lineNo = 0;
    for (String line : csv.split("\\R")) {
      lineNo++;
      if (line.isBlank()) {
        continue;
      }
      String[] f = line.split(",", -1);
      if (f.length != FIELDS) {
        throw new IllegalArgumentException(
            "query csv line "
                + lineNo
                + ": expected "
                + FIELDS
                + " fields ("
                + NvidiaSmi.QUERY_FIELDS
                + "), got "
                + f.length
                + ": '"
                + line.strip()
                + "'");
      }
      String where = "query csv line " + lineNo;
      long index = SmiValues.number(f[0], where + " index");
      if (index < 0) {
        throw new IllegalArgumentException(where + ": no index in '" + line.strip() + "'");
      }
      gpus.add(
          new GpuDetails(
              (int) index,
              f[1].strip(),
              f[2].strip(),
              SmiValues.mibToBytes(f[3], where + " memory.total"),
              f[4].strip(),
              SmiValues.celsius(f[5], where + " temperature.gpu"),
              GpuDetails.UNKNOWN,
              GpuDetails.UNKNOWN,
              SmiValues.number(f[6], where + " ecc.errors.uncorrected.volatile.total"),
              GpuDetails.UNKNOWN,
              SmiValues.yes(f[7]),
              false,
              false));
    }
    gpus.sort(Comparator.comparingInt(GpuDetails::index));
    return List.copyOf(gpus);
  }
}

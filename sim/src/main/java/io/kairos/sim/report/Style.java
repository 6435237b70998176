package io.kairos.sim.report;

import java.util.List;

/**
 * Colours and dash patterns. Line colours have at least 3:1 contrast against white (WCAG 1.4.11 for
 * graphics) and each policy also gets its own dash pattern, so series differ without colour. Area
 * colours come from the Okabe-Ito palette (distinguishable with colour-vision deficiency) and are
 * separated by white edges; every chart also names its series in text and has a table.
 */
final class Style {
  private Style() {}

  static final String TEXT = "#1a1a1a";
  static final String AXIS = "#4d4d4d";
  static final String GRID = "#dcdcdc";
  static final String FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";

  private static final List<String> LINES =
      List.of("#0072B2", "#C0392B", "#00795C", "#8E3B84", "#333333", "#8A5A00", "#1F5F99");
  private static final List<String> DASHES =
      List.of("", "7 4", "2 3", "10 3 2 3", "4 2", "12 4", "1 2");
  private static final List<String> AREAS =
      List.of(
          "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#6A3D9A",
          "#8C564B", "#1B9E77", "#B2B2B2", "#666666");

  static String line(int i) {
    return LINES.get(i % LINES.size());
  }

  static String dash(int i) {
    return DASHES.get(i % DASHES.size());
  }

  static String area(int i) {
    return AREAS.get(i % AREAS.size());
  }
}

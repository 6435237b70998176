/**
 * Simulation reports as pictures: a small SVG writer ({@link io.kairos.sim.report.Svg}), axis
 * scales, the chart types ({@link io.kairos.sim.report.LineChart}, {@link
 * io.kairos.sim.report.StackedAreaChart}, the small multiples of {@link
 * io.kairos.sim.report.QuotaChart}), the report charts built from {@link io.kairos.sim.SimSeries}
 * ({@link io.kairos.sim.report.ReportCharts}) and the self-contained HTML page ({@link
 * io.kairos.sim.report.HtmlReport}).
 *
 * <p>Everything here is a pure function from reports to text: no I/O beyond the {@code Appendable}
 * or string it returns, no clock, no locale (numbers are formatted with {@code Locale.ROOT}), no
 * hash-order output. The same reports give the same bytes. The output loads nothing from outside
 * the file: CSS and SVG are inline, fonts are the reader's system fonts, there is no script.
 */
package io.kairos.sim.report;

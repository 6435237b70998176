package io.kairos.cli;

import io.kairos.sim.Simulator;

/** A one-line progress bar on stderr, shown only when stderr is a terminal. */
final class ProgressBar implements Simulator.Progress {
  private final String label;
  private int lastPercent = -1;

  private ProgressBar(String label) {
    this.label = label;
  }

  /** A bar when attached to a terminal, else null. */
  static ProgressBar forTerminal(String label) {
    var console = System.console();
    return console != null && console.isTerminal() ? new ProgressBar(label) : null;
  }

  @Override
  public void update(long finished, long total) {
    int percent = total == 0 ? 100 : (int) (finished * 100 / total);
    if (percent == lastPercent) {
      return;
    }
    lastPercent = percent;
    int width = 30;
    int filled = percent * width / 100;
    System.err.print(
        "\r"
            + label
            + " ["
            + "#".repeat(filled)
            + " ".repeat(width - filled)
            + "] "
            + percent
            + "% ("
            + finished
            + "/"
            + total
            + " jobs)");
    System.err.flush();
  }

  void done() {
    System.err.print("\r\033[K");
    System.err.flush();
  }
}

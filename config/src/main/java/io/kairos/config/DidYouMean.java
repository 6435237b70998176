package io.kairos.config;

import java.util.List;
import java.util.Locale;

/**
 * "Did you mean ...?": the candidate nearest a misspelt word by edit distance (Levenshtein, case
 * ignored), for messages about unknown keys, values and names. Ties go to the earlier candidate.
 */
public final class DidYouMean {
  private DidYouMean() {}

  /**
   * The nearest candidate if it is a likely typo: within {@code max(2, word.length() / 3)} edits.
   *
   * @return the candidate, or null when none is that close
   */
  public static String closest(String word, List<String> candidates) {
    return closest(word, candidates, Math.max(2, word.length() / 3));
  }

  /**
   * The nearest candidate within {@code maxEdits} edits.
   *
   * @return the candidate, or null when none is that close
   */
  public static String closest(String word, List<String> candidates, int maxEdits) {
    String lower = word.toLowerCase(Locale.ROOT);
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (String c : candidates) {
      int d = distance(lower, c.toLowerCase(Locale.ROOT));
      if (d < bestDistance) {
        best = c;
        bestDistance = d;
      }
    }
    return bestDistance <= maxEdits ? best : null;
  }

  /** The Levenshtein distance: insertions, deletions and substitutions, one each. */
  static int distance(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int sub = prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
        cur[j] = Math.min(sub, Math.min(prev[j] + 1, cur[j - 1] + 1));
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }
}

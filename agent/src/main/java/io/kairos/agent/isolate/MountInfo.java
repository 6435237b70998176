package io.kairos.agent.isolate;

import java.util.ArrayList;
import java.util.List;

/**
 * One line of {@code /proc/self/mountinfo}, as far as cgroup detection needs it. Parsing is pure so
 * that recorded samples from other hosts can be tested.
 *
 * <p>Format (proc(5)): {@code 36 35 98:0 /root /mnt/point rw,noatime shared:1 - cgroup cgroup
 * rw,cpu,cpuacct}: the optional fields end at the lone {@code -}, after which come the file system
 * type, the source and the super options (where cgroup v1 names its controllers).
 */
record MountInfo(String root, String mountPoint, String fsType, List<String> superOptions) {
  MountInfo {
    superOptions = List.copyOf(superOptions);
  }

  /** Parses every well-formed line of a mountinfo file; malformed lines are skipped. */
  static List<MountInfo> parse(String text) {
    var mounts = new ArrayList<MountInfo>();
    for (String line : text.split("\n")) {
      String[] f = line.trim().split(" ");
      int dash = -1;
      for (int i = 6; i < f.length; i++) {
        if (f[i].equals("-")) {
          dash = i;
          break;
        }
      }
      if (dash < 0 || dash + 3 > f.length) {
        continue;
      }
      List<String> superOptions = dash + 3 < f.length ? List.of(f[dash + 3].split(",")) : List.of();
      mounts.add(new MountInfo(unescape(f[3]), unescape(f[4]), f[dash + 1], superOptions));
    }
    return mounts;
  }

  /** mountinfo escapes space, tab, newline and backslash as {@code \ooo} octal. */
  static String unescape(String s) {
    if (s.indexOf('\\') < 0) {
      return s;
    }
    var out = new StringBuilder();
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\\' && i + 3 < s.length()) {
        String oct = s.substring(i + 1, Math.min(i + 4, s.length()));
        if (oct.length() == 3 && oct.chars().allMatch(ch -> ch >= '0' && ch <= '7')) {
          out.append((char) Integer.parseInt(oct, 8));
          i += 3;
          continue;
        }
      }
      out.append(c);
    }
    return out.toString();
  }
}

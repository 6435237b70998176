package io.kairos.cli;

import java.nio.file.Path;

/**
 * Where a local controller keeps its data: {@code --data}, else {@code $KAIROS_DATA}, else {@code
 * ~/.kairos}.
 */
final class DataDir {
  private DataDir() {}

  static Path resolve(Path option) {
    if (option != null) {
      return option.toAbsolutePath();
    }
    String env = Environment.variable("KAIROS_DATA");
    if (env == null) {
      return Environment.home.resolve(".kairos");
    }
    if (env.equals("~") || env.startsWith("~/")) {
      return Environment.home.resolve(env.substring(Math.min(2, env.length()))).normalize();
    }
    return Path.of(env).toAbsolutePath();
  }
}

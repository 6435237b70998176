package io.kairos.cli;

import io.kairos.config.Tenancy;
import io.kairos.config.TenancyYaml;
import java.nio.file.Path;

/**
 * {@code --tenancy FILE} of {@code kairos server} and {@code kairos up}: the tenancy file (see
 * docs/tenancy.md) read and checked here, in the CLI, and handed to the controller as core objects.
 * On a data directory without a replicated configuration it becomes version 1 of it; later starts
 * keep the replicated one ({@code kairos config apply} changes it).
 */
final class TenancyFile {
  private TenancyFile() {}

  /**
   * Reads and checks the file.
   *
   * @throws UsageException with every problem, one per line (exit code 2, no stack trace)
   */
  static Tenancy read(Path file) {
    try {
      return TenancyYaml.read(file);
    } catch (TenancyYaml.InvalidConfig e) {
      throw new UsageException("--tenancy: the tenancy file is not valid:\n" + e.getMessage());
    }
  }
}

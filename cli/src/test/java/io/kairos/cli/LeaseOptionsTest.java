package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bad lease options stop the server or agent before it starts, naming the option and its bounds.
 */
class LeaseOptionsTest {
  @TempDir Path dir;

  record Run(int code, String err) {}

  static Run kairos(String... args) {
    var out = new StringWriter();
    var err = new StringWriter();
    int code = Main.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
    return new Run(code, err.toString());
  }

  Run server(String... options) {
    var args = new java.util.ArrayList<>(java.util.List.of("server", "--data", dir.toString()));
    args.addAll(java.util.List.of(options));
    return kairos(args.toArray(String[]::new));
  }

  @Test
  void aLeaseOutsideItsBoundsIsAUsageError() {
    var r = server("--lease", "1s");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err())
        .contains("--lease")
        .contains("lease must be between 2000 ms and 3600000 ms, got 1000 ms")
        .doesNotContain("Exception");
  }

  @Test
  void aMarginTooSmallForTheLeaseNamesTheLeastOne() {
    var r = server("--lease", "60s", "--lease-margin", "300ms");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).contains("--lease-margin").contains("at least 800 ms");
  }

  @Test
  void aLeaseThatIsNotADurationSaysHowToWriteOne() {
    var r = server("--lease", "soon");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).contains("--lease soon is not a duration");
  }

  @Test
  void aFenceMarginOverAMinuteIsAUsageError() {
    var r =
        kairos(
            "agent",
            "--controller",
            "http://127.0.0.1:1",
            "--join-token",
            "kjoin_x",
            "--data",
            dir.resolve("agent").toString(),
            "--emulate-gpus",
            "1",
            "--fence-margin",
            "2m");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).contains("--fence-margin 2m is too long");
  }
}

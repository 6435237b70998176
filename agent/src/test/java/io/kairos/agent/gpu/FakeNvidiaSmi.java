package io.kairos.agent.gpu;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * A fixture directory for the fake {@code nvidia-smi} script in {@code
 * src/test/resources/fake-nvidia-smi}: copy a recorded sample in, then edit it (bump an ECC count,
 * drop a GPU, make a command fail) to drive the real parsers and checks through a real process.
 */
final class FakeNvidiaSmi {
  static final String ENV = "FAKE_NVIDIA_SMI_DIR";

  private final Path dir;

  private FakeNvidiaSmi(Path dir) {
    this.dir = dir;
  }

  /** A fixture in {@code dir} holding the sample {@code name} (e.g. {@code dgx-h100}). */
  static FakeNvidiaSmi withSample(Path dir, String name) {
    var fake = new FakeNvidiaSmi(dir);
    for (String file : new String[] {"q.xml", "query.csv", "topo.txt"}) {
      fake.write(file, Samples.read(name, file));
    }
    return fake;
  }

  /** The fake binary, from the test classpath. */
  static Path binary() {
    try {
      var url = FakeNvidiaSmi.class.getResource("/fake-nvidia-smi/nvidia-smi");
      if (url == null) {
        throw new IllegalStateException("fake-nvidia-smi/nvidia-smi is not on the test classpath");
      }
      Path path = Path.of(url.toURI());
      // Maven copies resources without their mode bits; put the executable bit back.
      if (!Files.isExecutable(path)) {
        path.toFile().setExecutable(true);
      }
      return path;
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  /** An {@link NvidiaSmi} that runs the fake against this fixture. */
  NvidiaSmi smi() {
    return smi(Duration.ofSeconds(10));
  }

  NvidiaSmi smi(Duration timeout) {
    return new NvidiaSmi(binary().toString(), Map.of(ENV, dir.toString()), timeout);
  }

  Path dir() {
    return dir;
  }

  FakeNvidiaSmi write(String file, String content) {
    try {
      Files.writeString(dir.resolve(file), content);
      return this;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  String read(String file) {
    try {
      return Files.readString(dir.resolve(file));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  FakeNvidiaSmi edit(String file, UnaryOperator<String> change) {
    String before = read(file);
    String after = change.apply(before);
    if (after.equals(before)) {
      throw new IllegalArgumentException("the edit of " + file + " changed nothing");
    }
    return write(file, after);
  }

  /** Makes every command exit {@code code} with {@code stderr}. */
  FakeNvidiaSmi fail(int code, String stderr) {
    return write("exit", Integer.toString(code)).write("stderr", stderr + "\n");
  }

  /** Makes one command ({@code q.xml}, {@code query.csv}, {@code topo.txt}) exit {@code code}. */
  FakeNvidiaSmi fail(String output, int code, String stderr) {
    return write(output + ".exit", Integer.toString(code)).write(output + ".stderr", stderr + "\n");
  }

  FakeNvidiaSmi sleep(Duration duration) {
    return write("sleep", Long.toString(duration.toSeconds()));
  }

  FakeNvidiaSmi remove(String file) {
    try {
      Files.deleteIfExists(dir.resolve(file));
      return this;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}

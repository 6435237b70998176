package io.kairos.agent.gpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIOException;

import io.kairos.agent.gpu.HostInfo.NumaNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class HostInfoTest {
  @TempDir Path root;

  @Test
  void readsCpusMemoryAndNumaNodesOfATwoSocketHost() throws IOException {
    write("sys/devices/system/cpu/online", "0-223\n");
    write(
        "proc/meminfo",
        "MemTotal:       2113389712 kB\nMemFree:        2046829128 kB\nMemAvailable:   2071178128 kB\n");
    write("sys/devices/system/node/node0/cpulist", "0-55,112-167\n");
    write("sys/devices/system/node/node1/cpulist", "56-111,168-223\n");
    write("sys/devices/system/node/node10/cpulist", "\n"); // memory-only (CXL) node
    write("sys/devices/system/node/possible", "0-1\n");

    HostInfo host = HostInfo.read(root, 200);

    assertThat(host.availableProcessors()).isEqualTo(200);
    assertThat(host.onlineCpus()).isEqualTo(224);
    assertThat(host.memoryBytes()).isEqualTo(2113389712L * 1024);
    assertThat(host.numaNodes())
        .containsExactly(
            new NumaNode(0, "0-55,112-167", 112),
            new NumaNode(1, "56-111,168-223", 112),
            new NumaNode(10, "", 0));
  }

  @Test
  void missingFilesLeaveReadingsUnknown() throws IOException {
    HostInfo host = HostInfo.read(root, 4);

    assertThat(host).isEqualTo(new HostInfo(4, 0, 0, java.util.List.of()));
  }

  @Test
  void theRealHostReadsWithoutError() throws IOException {
    HostInfo host = HostInfo.read();

    assertThat(host.availableProcessors()).isPositive();
  }

  @Test
  void malformedFilesAreErrorsNamingTheFile() throws IOException {
    write("proc/meminfo", "MemFree: 12 kB\n");
    assertThatIOException()
        .isThrownBy(() -> HostInfo.read(root, 1))
        .withMessageContaining("meminfo");

    Files.delete(root.resolve("proc/meminfo"));
    write("sys/devices/system/cpu/online", "zero\n");
    assertThatIOException()
        .isThrownBy(() -> HostInfo.read(root, 1))
        .withMessageContaining("online");
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {"0|1", "0-3|4", "0-3,8,10-11|7", "''|0", "0-55,112-167|112"})
  void countsCpuLists(String list, int count) throws IOException {
    assertThat(HostInfo.countCpus(list, Path.of("cpulist"))).isEqualTo(count);
  }

  private void write(String file, String content) throws IOException {
    Path path = root.resolve(file);
    Files.createDirectories(path.getParent());
    Files.writeString(path, content);
  }
}

package io.kairos.control.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.control.state.ControlCommand.DrainNode;
import io.kairos.control.state.ControlCommand.NodeDown;
import io.kairos.control.state.ControlCommand.RegisterNode;
import io.kairos.control.state.ControlCommand.Start;
import io.kairos.control.state.ControlCommand.StartJobs;
import io.kairos.control.state.ControlCommand.SubmitJobs;
import io.kairos.control.state.ControlCommand.TaskEnded;
import io.kairos.control.state.ControlState;
import io.kairos.control.state.JobRequest;
import io.kairos.protocol.GpuDevice;
import io.kairos.protocol.TaskPlacement;
import io.kairos.protocol.agent.Registration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class UtilizationSamplerTest {
  static final long T0 = 1_700_000_000_000L;

  static Registration node(String name, int gpus) {
    var list = new ArrayList<GpuDevice>();
    for (int i = 0; i < gpus; i++) {
      list.add(new GpuDevice(i, "GPU-" + name + "-" + i, "H100", 80L << 30));
    }
    return new Registration(
        name, "http://127.0.0.1:1", list, 64, 512L << 30, Map.of(), "z", "b", "r", gpus);
  }

  static JobRequest job(int gpus) {
    return new JobRequest(
        "job",
        List.of("sleep", "60"),
        Map.of(),
        "",
        gpus,
        0,
        0,
        0,
        3600,
        "default",
        0,
        "",
        "alice");
  }

  @Test
  void measuresGpusInServiceBusyGpusQueueAndStartsAndEndsInTheInterval() {
    var st = new ControlState();
    st.apply(new RegisterNode(T0, node("n1", 8)));
    st.apply(new RegisterNode(T0, node("n2", 8)));
    st.apply(new RegisterNode(T0, node("n3", 4)));
    st.apply(new SubmitJobs(T0, List.of(job(2), job(4), job(1), job(64))));
    st.apply(
        new StartJobs(
            T0 + 1_000,
            List.of(
                new Start(1, List.of(new TaskPlacement(0, "n1", List.of(0, 1)))),
                new Start(2, List.of(new TaskPlacement(0, "n2", List.of(0, 1, 2, 3)))),
                new Start(3, List.of(new TaskPlacement(0, "n1", List.of(2)))))));
    long epoch = st.node("n1").orElseThrow().epoch;
    st.apply(new TaskEnded(T0 + 15_000, "n1", epoch, 3, 1, 0, 0, null, null));
    st.apply(new DrainNode(T0 + 15_000, "n2", "maintenance"));
    st.apply(new NodeDown(T0 + 15_000, "n3", st.node("n3").orElseThrow().epoch, "lost", T0));

    var s = UtilizationSampler.measure(st, T0 + 10_000, T0 + 20_000);
    assertThat(s.gpusTotal()).as("n1 and the drained n2; n3 is down").isEqualTo(16);
    assertThat(s.gpusBusy()).isEqualTo(6);
    assertThat(s.pending()).isEqualTo(1);
    assertThat(s.running()).isEqualTo(2);
    assertThat(s.started()).as("the starts were before the interval").isZero();
    assertThat(s.finished()).isEqualTo(1);

    var earlier = UtilizationSampler.measure(st, T0, T0 + 10_000);
    assertThat(earlier.started()).isEqualTo(3);
    assertThat(earlier.finished()).isZero();
  }
}

package io.kairos.control.state;

import static io.kairos.control.state.StateFixtures.T0;
import static io.kairos.control.state.StateFixtures.gang;
import static io.kairos.control.state.StateFixtures.register;
import static io.kairos.control.state.StateFixtures.startTasks;
import static io.kairos.control.state.StateFixtures.submit;
import static io.kairos.control.state.StateFixtures.task;
import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.control.raft.CommandCodec;
import io.kairos.control.state.ControlCommand.RegisterNode;
import io.kairos.control.state.ControlCommand.RegisterNodes;
import io.kairos.protocol.agent.TaskRef;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.LongStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A {@link RegisterNodes} entry (registrations packed by group commit) does exactly what its
 * registrations would as entries of their own: the same answer for each, in order, and the same
 * state to the byte, before and after the next command that reads the scheduler's store. Generated
 * bursts mix new nodes, agent restarts with and without adopted tasks, nodes that come back with
 * another shape, and registrations refused for a credential bound elsewhere.
 */
class RegisterNodesProperties {
  /** Seeds 0..199; {@code -Dkairos.propertySeed=S} replays one. */
  static LongStream seeds() {
    String only = System.getProperty("kairos.propertySeed");
    return only == null || only.isBlank()
        ? LongStream.range(0, 200)
        : LongStream.of(Long.parseLong(only.trim()));
  }

  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void aPackedBurstAppliesAsItsRegistrationsOneByOne(long seed) {
    {
      {
        var rnd = new Random(seed);
        List<RegisterNode> burst = burst(rnd);
        ControlState separate = running();
        ControlState packed = running();

        var one = new ArrayList<ControlResult>();
        for (RegisterNode r : burst) {
          one.add(separate.apply(r));
        }
        ControlResult all = packed.apply(new RegisterNodes(T0 + 10_000, burst));

        String replay = "seed " + seed + " (-Dkairos.propertySeed=" + seed + "): ";
        assertThat(all.isOk()).as(replay + "the entry").isTrue();
        assertThat(all.items()).as(replay + "each one's answer").isEqualTo(one);
        assertThat(image(packed)).as(replay + "the state").isEqualTo(image(separate));
        // the store is rebuilt lazily: the next command that reads it sees the same nodes
        var next = submit(StateFixtures.job(1));
        assertThat(packed.apply(next))
            .as(replay + "the next command")
            .isEqualTo(separate.apply(next));
        assertThat(image(packed)).as(replay + "the state after it").isEqualTo(image(separate));
        assertThat(StateInvariants.violations(packed)).as(replay + "invariants").isEmpty();
      }
    }
  }

  /** The generator makes the cases that matter: some bursts hold a refused registration. */
  @org.junit.jupiter.api.Test
  void someGeneratedBurstsHoldARefusal() {
    long refused =
        LongStream.range(0, 200)
            .filter(
                seed -> {
                  ControlState s = running();
                  return burst(new Random(seed)).stream().anyMatch(r -> !s.apply(r).isOk());
                })
            .count();
    assertThat(refused).isBetween(20L, 190L);
  }

  /** Two 8-GPU nodes bound to credentials, a gang running over both. */
  static ControlState running() {
    var s = new ControlState();
    s.apply(new RegisterNode(T0, StateFixtures.node("n1", 8), "cred-n1"));
    s.apply(new RegisterNode(T0, StateFixtures.node("n2", 8), "cred-n2"));
    s.apply(register("n3", 4));
    s.apply(submit(gang(8, 4)));
    s.apply(startTasks(1, task(0, "n1", 0, 1, 2, 3), task(1, "n2", 0, 1, 2, 3)));
    return s;
  }

  static List<RegisterNode> burst(Random rnd) {
    var out = new ArrayList<RegisterNode>();
    int n = 2 + rnd.nextInt(20);
    for (int i = 0; i < n; i++) {
      long at = T0 + 5_000 + i;
      String name = rnd.nextInt(3) == 0 ? "n" + (1 + rnd.nextInt(3)) : "new" + rnd.nextInt(8);
      int gpus = rnd.nextInt(4) == 0 ? 4 : 8;
      String credential =
          switch (rnd.nextInt(4)) {
            case 0 -> null;
            case 1 -> "cred-" + name; // its own
            case 2 -> "cred-n" + (1 + rnd.nextInt(2)); // maybe bound to another node
            default -> "cred-" + name + "-" + rnd.nextInt(2); // maybe another than its own
          };
      List<TaskRef> adopted =
          rnd.nextBoolean() ? List.of(new TaskRef(1, 1, rnd.nextInt(2))) : List.of();
      out.add(new RegisterNode(at, StateFixtures.node(name, gpus), credential, adopted));
    }
    return out;
  }

  static String image(ControlState state) {
    var out = new ByteArrayOutputStream();
    try {
      CommandCodec.writeImage(state.image(), out);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    return out.toString(StandardCharsets.UTF_8);
  }
}

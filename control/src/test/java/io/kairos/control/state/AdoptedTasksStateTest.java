package io.kairos.control.state;

import static io.kairos.control.state.StateFixtures.T0;
import static io.kairos.control.state.StateFixtures.ended;
import static io.kairos.control.state.StateFixtures.gang;
import static io.kairos.control.state.StateFixtures.register;
import static io.kairos.control.state.StateFixtures.start;
import static io.kairos.control.state.StateFixtures.startTasks;
import static io.kairos.control.state.StateFixtures.submit;
import static io.kairos.control.state.StateFixtures.task;
import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.control.state.ControlCommand.RegisterNode;
import io.kairos.protocol.JobState;
import io.kairos.protocol.agent.TaskRef;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A restarted agent that adopted its predecessor's tasks registers with them: their jobs keep
 * running with the same attempt and no requeue, their ends are recorded from the new epoch, and
 * anything not adopted (another attempt, another node's rank, a task left out) is lost as before.
 */
class AdoptedTasksStateTest {
  static ControlState running() {
    var s = new ControlState();
    s.apply(register("n1", 8));
    s.apply(register("n2", 8));
    s.apply(submit(gang(8, 4)));
    s.apply(startTasks(1, task(0, "n1", 0, 1, 2, 3), task(1, "n2", 0, 1, 2, 3)));
    return s;
  }

  static RegisterNode reRegister(String node, TaskRef... adopted) {
    return new RegisterNode(T0 + 5_000, StateFixtures.node(node, 8), null, List.of(adopted));
  }

  @Test
  void anAdoptedTaskKeepsItsGangRunningWithTheSameAttempt() {
    var s = running();
    var result = s.apply(reRegister("n1", new TaskRef(1, 1, 0)));
    assertThat(result.isOk()).isTrue();
    JobRecord job = s.job(1).orElseThrow();
    assertThat(job.state).isEqualTo(JobState.RUNNING);
    assertThat(job.attempt).isEqualTo(1);
    assertThat(job.requeues).isZero();
    assertThat(job.requeueing).isFalse();
    assertThat(job.taskExits).containsOnlyNulls();
    assertThat(StateInvariants.violations(s)).isEmpty();

    // Both ranks end; n1's end comes under its new epoch.
    long epoch = result.ids().get(0);
    assertThat(s.apply(ended("n1", epoch, 1, 1, 0, 0)).isOk()).isTrue();
    assertThat(s.apply(ended("n2", 2, 1, 1, 1, 0)).isOk()).isTrue();
    assertThat(s.job(1).orElseThrow().state).isEqualTo(JobState.SUCCEEDED);
    assertThat(StateInvariants.violations(s)).isEmpty();
  }

  @Test
  void aTaskOfAnotherAttemptOrAnotherNodeIsNotAdopted() {
    var s = running();
    s.apply(reRegister("n1", new TaskRef(1, 0, 0), new TaskRef(1, 1, 1)));
    JobRecord job = s.job(1).orElseThrow();
    assertThat(job.requeueing || job.state == JobState.PENDING)
        .as("requeued: %s", job.state)
        .isTrue();
    assertThat(StateInvariants.violations(s)).isEmpty();
  }

  @Test
  void aRegistrationWithoutTheTaskLosesItAsBefore() {
    var s = new ControlState();
    s.apply(register("n1", 8));
    s.apply(submit(StateFixtures.job(2)));
    s.apply(start(1, "n1", 0, 1));
    s.apply(reRegister("n1"));
    JobRecord job = s.job(1).orElseThrow();
    assertThat(job.state).isEqualTo(JobState.PENDING);
    assertThat(job.requeues).isEqualTo(1);
  }
}

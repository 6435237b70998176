package io.kairos.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Method;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class ForwardingHooksTest {
  /**
   * A hook the forwarder does not override would silently answer with the interface's neutral
   * default in the real agent (an owner of null ran every task as the agent itself).
   */
  @Test
  void everyHookIsForwarded() throws Exception {
    for (Method m : TaskHooks.class.getDeclaredMethods()) {
      if (m.isSynthetic() || java.lang.reflect.Modifier.isStatic(m.getModifiers())) {
        continue;
      }
      Method forwarded = ForwardingHooks.class.getMethod(m.getName(), m.getParameterTypes());
      assertThat(forwarded.getDeclaringClass())
          .as("ForwardingHooks overrides %s", m.getName())
          .isEqualTo(ForwardingHooks.class);
    }
    assertThat(Arrays.stream(TaskHooks.class.getDeclaredMethods()).map(Method::getName))
        .contains("owner", "isolate", "healthProblems");
  }
}

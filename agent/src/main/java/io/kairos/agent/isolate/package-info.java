/**
 * Task isolation and fencing on the agent's host: per-task cgroups ({@link
 * io.kairos.agent.isolate.Cgroups}, {@link io.kairos.agent.isolate.TaskCgroup}), and a watchdog
 * process that kills the tasks when the agent's lease runs out even if the agent itself is frozen
 * ({@link io.kairos.agent.isolate.LeaseFile}, {@link io.kairos.agent.isolate.FenceWatchdog}, {@link
 * io.kairos.agent.isolate.FenceWatchdogMain}, {@link io.kairos.agent.isolate.Orphans}).
 *
 * <p>Nothing here depends on the rest of the agent except {@link io.kairos.agent.TaskKey}: the
 * watchdog runs in its own small JVM and loads only this package. Files shared between the agent
 * and the watchdog are plain {@code key=value} lines, written atomically (temp file, rename).
 */
package io.kairos.agent.isolate;

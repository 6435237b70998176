/**
 * The node agent: registers its node with the controller, heartbeats the state of every task it
 * holds, and runs the tasks it is assigned as real processes, serving their output over HTTP.
 *
 * <p>Pure parts ({@link io.kairos.agent.AgentConfig}, {@link io.kairos.agent.EmulatedGpus}, {@link
 * io.kairos.agent.LaunchSpec}, {@link io.kairos.agent.Backoff}) are separated from the parts that
 * act: {@link io.kairos.agent.ProcessLauncher} is the only class that starts or signals processes,
 * {@link io.kairos.agent.TaskTable} owns the tasks, {@link io.kairos.agent.ControllerClient} the
 * controller connection and {@link io.kairos.agent.LogServer} the agent's own HTTP server. {@link
 * io.kairos.agent.Agent} wires them together and is the only entry point a CLI needs.
 *
 * <p>Time comes from an injected {@link java.time.InstantSource} and jitter from an injected {@link
 * java.util.random.RandomGenerator}; nothing here reads the wall clock for state. The agent never
 * decides what runs: it does what the controller's replies say, idempotently.
 */
package io.kairos.agent;

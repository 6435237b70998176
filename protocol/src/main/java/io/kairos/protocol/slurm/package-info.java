/**
 * Slurm's rules, as the controller, the agent and the CLI all need them: host lists in Slurm's
 * compressed form ({@link io.kairos.protocol.slurm.HostList}), how a job's or a step's tasks are
 * spread over its nodes ({@link io.kairos.protocol.slurm.TaskLayout}, {@link
 * io.kairos.protocol.slurm.StepLayout}), and how a step's exit code follows from its tasks' ({@link
 * io.kairos.protocol.slurm.StepExit}). Pure functions over values, JDK only: each rule was checked
 * against a real Slurm 22.05 (the tests name what it printed).
 */
package io.kairos.protocol.slurm;

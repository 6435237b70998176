/**
 * Naming rules shared by the controller, the agent and the CLI, as Slurm sites write names: GPU
 * model names matched by a key that ignores vendor words, form factors and memory sizes ({@link
 * GpuModels}). Host lists in Slurm's compressed form are {@link io.kairos.protocol.slurm.HostList}.
 * Pure functions of their arguments; no configuration.
 */
package io.kairos.protocol.names;

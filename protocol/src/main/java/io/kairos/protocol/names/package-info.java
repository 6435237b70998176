/**
 * Naming rules shared by the controller, the agent and the CLI, as Slurm sites write names: host
 * lists in Slurm's compressed form ({@link HostList}) and GPU model names matched by a key that
 * ignores vendor words, form factors and memory sizes ({@link GpuModels}). Pure functions of their
 * arguments; no configuration.
 */
package io.kairos.protocol.names;

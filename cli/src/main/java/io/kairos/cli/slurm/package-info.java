/**
 * Kairos' own {@code srun} and {@code scontrol}, which the agent puts first on every task's {@code
 * PATH}: srun starts a job step's tasks across the job's allocation through the controller and the
 * agents, forwards their output and exits with the step's exit code as Slurm's srun does; scontrol
 * expands and compresses host lists and shows a job. Batch scripts call them in loops, so they
 * start fast: JDK classes only (no picocli, no Jackson, no {@code java.net.http}), a small JSON
 * codec of their own ({@link io.kairos.cli.slurm.TinyJson}), one class loaded per concern.
 */
package io.kairos.cli.slurm;

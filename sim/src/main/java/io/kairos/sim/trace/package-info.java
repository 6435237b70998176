/**
 * Reading workload traces into {@link io.kairos.sim.trace.Trace}s: Standard Workload Format ({@link
 * io.kairos.sim.trace.SwfReader}), the Philly job file ({@link io.kairos.sim.trace.PhillyReader}),
 * Slurm's {@code sacct --parsable2} output ({@link io.kairos.sim.trace.SacctReader}) and Kairos'
 * own CSV ({@link io.kairos.sim.trace.KairosCsvReader}, {@link
 * io.kairos.sim.trace.KairosCsvWriter}). {@link io.kairos.sim.trace.TraceReaders} picks the reader.
 *
 * <p>Every problem with an input file is reported as a {@link
 * io.kairos.sim.trace.TraceFormatException} that names the file, the line and the field.
 */
package io.kairos.sim.trace;

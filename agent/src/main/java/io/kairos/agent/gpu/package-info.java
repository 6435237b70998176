/**
 * Real GPU discovery and health checks for the agent, through {@code nvidia-smi}.
 *
 * <p>Parsers ({@link io.kairos.agent.gpu.SmiXmlParser}, {@link io.kairos.agent.gpu.QueryCsvParser},
 * {@link io.kairos.agent.gpu.Topology#parse}), the inventory ({@link
 * io.kairos.agent.gpu.GpuInventory}, with its NVLink domains) and the judge ({@link
 * io.kairos.agent.gpu.HealthChecker}) are pure values and functions, tested on recorded nvidia-smi
 * output. Only {@link io.kairos.agent.gpu.CommandRunner} starts processes, on behalf of {@link
 * io.kairos.agent.gpu.NvidiaSmi} and {@link io.kairos.agent.gpu.HealthCheckProgram}; {@link
 * io.kairos.agent.gpu.Discovery} and {@link io.kairos.agent.gpu.HealthProbe} sequence those runs.
 * {@link io.kairos.agent.gpu.HostInfo} reads CPUs, memory and NUMA nodes from {@code /proc} and
 * {@code /sys} under a configurable root.
 *
 * <p>Nothing here talks to the controller, decides scheduling, or reads the clock for state: the
 * agent decides when to discover and probe, and what to do with a report.
 */
package io.kairos.agent.gpu;

/**
 * Benchmarks: JMH benchmarks of one scheduling pass and of the simulator, a profiling probe and a
 * million-job memory check. Builds its states from fixed seeds through the core's public API;
 * nothing here is used by the product.
 */
package io.kairos.bench;

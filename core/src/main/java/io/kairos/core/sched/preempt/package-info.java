/**
 * Victim search for preemption: {@link io.kairos.core.sched.preempt.PreemptionPlanner} finds a
 * small (1-minimal) set of running jobs whose removal frees a valid placement for a blocked gang,
 * and {@link io.kairos.core.sched.preempt.ProtectionPolicy} keeps recently or often preempted jobs
 * out of the candidates (no thrashing). Pure functions over values: nothing here reads a clock,
 * writes the store or decides who may preempt whom (the caller chooses and orders the candidates).
 */
package io.kairos.core.sched.preempt;

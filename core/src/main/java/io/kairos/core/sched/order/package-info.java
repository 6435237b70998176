/**
 * Which pending job a pass considers first. A {@link io.kairos.core.sched.order.JobOrder} gives
 * each job a sort key at the pass's time; every order is priority first and ends in the job id, so
 * it is total and deterministic.
 */
package io.kairos.core.sched.order;

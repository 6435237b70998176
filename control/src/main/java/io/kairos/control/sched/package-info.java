/**
 * The scheduler loop: on the leader, at every state change and at least every second, it runs the
 * core's {@code SchedulingPass} on a snapshot of the store and proposes the starts it decides as
 * one command. It keeps the last pass's pending reasons for the API.
 */
package io.kairos.control.sched;

/**
 * The agent protocol's server side: registration (a new epoch, through the log), heartbeats
 * (leader-local: last-seen times are soft state, not log entries) and the reconciliation that turns
 * the replicated state and an agent's report into launches, kills and acknowledgements.
 */
package io.kairos.control.agent;

/**
 * The log's alphabet: every change to cluster state is a {@link io.kairos.core.command.Command},
 * applied in order by {@link io.kairos.core.state.Reducer}. Commands carry the time they happened
 * as a value; nothing here reads a clock.
 */
package io.kairos.core.command;

/**
 * The single {@code kairos} command (picocli): one class per subcommand. Commands validate user
 * input at the edge and print one line naming the field and the fix on bad input (exit 2).
 */
package io.kairos.cli;

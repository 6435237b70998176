/**
 * The single {@code kairos} command (picocli): one class per subcommand. Commands validate user
 * input at the edge and print one line naming the field and the fix on bad input (exit 2).
 *
 * <p>The client commands ({@code submit}, {@code queue}, {@code cancel}, {@code show}, {@code
 * logs}, {@code history}, {@code nodes}, {@code token}, {@code whoami}, {@code bench}) talk to a
 * controller only through its REST API ({@link io.kairos.cli.ApiClient}), share {@code --server},
 * {@code --token} and {@code --output table|json} ({@link io.kairos.cli.ClientOptions}), and end
 * through {@link io.kairos.cli.ApiCommand}: exit 0 when done; 1 when no controller answered or it
 * refused the request (404, 403, 409, 5xx); 2 for bad input, found here or reported by the
 * controller as 400/422; 130 if interrupted. {@code submit --wait} exits with the job's exit code.
 * Every failure is one line on stderr starting {@code kairos: }, never a stack trace (a bug prints
 * "internal error" in one line; {@code KAIROS_DEBUG=1} adds its trace).
 */
package io.kairos.cli;

/**
 * The web dashboard's server side: the static page (HTML, CSS, ES modules under {@code
 * resources/dashboard}) and its Content-Security-Policy, the leader's utilization history and its
 * sampler, and the event stream that tells a page the state changed. Everything a page shows comes
 * from the authenticated {@code /api/v1} API; nothing here serves cluster data without a token, and
 * nothing here writes the replicated state.
 */
package io.kairos.control.dashboard;

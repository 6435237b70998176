/**
 * Bearer tokens: generated with a secure random, stored only as SHA-256 hashes (in the replicated
 * state, and the bootstrap ones also in {@code DATA/*.token} files, mode 0600), and resolved to a
 * {@link io.kairos.control.auth.Principal} per request; who a user's jobs run as on the nodes
 * ({@link io.kairos.control.auth.RunAsPolicy}); {@link io.kairos.control.auth.PrivateData}, who of
 * them may read a job's private data; and a job's step credential, a token of role {@code job}
 * whose scope is that job's steps ({@link io.kairos.control.auth.JobScope}).
 */
package io.kairos.control.auth;

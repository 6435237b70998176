/**
 * The accounting store: ended jobs, their attempts and their use, kept after they leave the
 * replicated state. Embedded SQLite by default (a file in the data directory), PostgreSQL for a
 * site; one schema on both, migrated by Flyway. The {@link
 * io.kairos.control.accounting.AccountingWriter} writes it from the state (idempotent upserts keyed
 * by job and attempt) and then has the leader propose that the jobs be forgotten; the API's history
 * and report read it. Nothing here decides scheduling, and nothing here is replicated.
 */
package io.kairos.control.accounting;

-- The dashboard's utilization history: one row per sample the leader (or, with the embedded store,
-- each replica) takes of the replicated state, every 10 seconds by default, kept 14 days. A new
-- leader and a restarted controller rebuild the history from it. Times are epoch milliseconds.

CREATE TABLE utilization (
  at_ms BIGINT NOT NULL PRIMARY KEY,
  gpus_total BIGINT NOT NULL,
  gpus_busy BIGINT NOT NULL,
  pending BIGINT NOT NULL,
  running BIGINT NOT NULL,
  started BIGINT NOT NULL,
  finished BIGINT NOT NULL
);

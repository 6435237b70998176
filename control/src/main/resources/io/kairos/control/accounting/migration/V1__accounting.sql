-- The accounting store's schema: the same on SQLite and PostgreSQL (portable types only).
-- Times are epoch milliseconds (UTC). Written by the controller with upserts keyed by job and
-- attempt, so writing a job twice (a failover, a retry) changes nothing.

CREATE TABLE jobs (
  job_id BIGINT NOT NULL PRIMARY KEY,
  name TEXT NOT NULL,
  user_name TEXT NOT NULL,
  account TEXT NOT NULL,
  queue TEXT NOT NULL,
  priority_class TEXT NOT NULL,
  state TEXT NOT NULL,
  exit_code INTEGER,
  message TEXT,
  submit_ms BIGINT NOT NULL,
  start_ms BIGINT,
  end_ms BIGINT NOT NULL,
  attempts INTEGER NOT NULL,
  requeues INTEGER NOT NULL,
  preemptions INTEGER NOT NULL,
  gpus INTEGER NOT NULL,
  gpu_model TEXT NOT NULL,
  tasks INTEGER NOT NULL,
  cpus INTEGER NOT NULL,
  memory_mb BIGINT NOT NULL,
  time_limit_sec BIGINT NOT NULL,
  nodes TEXT NOT NULL,
  gpu_seconds DOUBLE PRECISION NOT NULL,
  cpu_seconds DOUBLE PRECISION NOT NULL,
  memory_mb_seconds DOUBLE PRECISION NOT NULL,
  usage_json TEXT NOT NULL,
  attempts_json TEXT NOT NULL,
  record_json TEXT NOT NULL
);

CREATE INDEX jobs_end ON jobs (end_ms);
CREATE INDEX jobs_user_end ON jobs (user_name, end_ms);
CREATE INDEX jobs_account_end ON jobs (account, end_ms);

CREATE TABLE attempts (
  job_id BIGINT NOT NULL,
  attempt INTEGER NOT NULL,
  start_ms BIGINT NOT NULL,
  end_ms BIGINT NOT NULL,
  nodes TEXT NOT NULL,
  cpus INTEGER NOT NULL,
  memory_mb BIGINT NOT NULL,
  exit_code INTEGER,
  reason TEXT,
  preempted_by BIGINT NOT NULL,
  PRIMARY KEY (job_id, attempt)
);

CREATE INDEX attempts_end ON attempts (end_ms);

CREATE TABLE attempt_gpus (
  job_id BIGINT NOT NULL,
  attempt INTEGER NOT NULL,
  gpu_model TEXT NOT NULL,
  gpus INTEGER NOT NULL,
  PRIMARY KEY (job_id, attempt, gpu_model)
);

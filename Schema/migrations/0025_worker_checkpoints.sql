-- How far a worker that scans the log for unfinished work knows everything to be done, so that
-- a server's first pass after a start begins there (issue 27): kept in memory only, every start
-- walked the whole past. At 20,000,000 events the retry worker's scan for undecided submissions
-- went through 3,050,000 of them (4.8 s of a core) beside the reads being served, and the
-- finishing worker's scan for unfinished deliveries through the whole log. Done stays done (the
-- log is append-only), so any server may move a mark forward; a move lost to a crash only means
-- scanning a little again.
--   undecided-submissions: every receipt submission up to here is decided (RetryWorker).
--   unfinished-deliveries: every delivery up to here is finished with Apple or refused
--                          (FinishTransactionWorker).
CREATE TABLE worker_checkpoints (
    worker     text        NOT NULL CHECK (worker <> ''),
    position   bigint      NOT NULL CHECK (position >= 0),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT worker_checkpoints_pkey PRIMARY KEY (worker)
);

REVOKE ALL ON worker_checkpoints FROM PUBLIC;
GRANT SELECT, INSERT, UPDATE ON worker_checkpoints TO ledger_app;
DO $$
BEGIN
    IF pg_has_role(current_user, 'ledger_owner', 'MEMBER') THEN
        ALTER TABLE worker_checkpoints OWNER TO ledger_owner;
    END IF;
END $$;

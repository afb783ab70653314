-- How far every receipt submission is known decided: where the retry worker's scan for
-- submissions nobody decided starts (issue 27). Kept in memory only, a server's first pass
-- walked every submission the log holds: at 20,000,000 events, 3,050,000 of them and 4.8 s of
-- a core on every start, beside the reads it serves. Decided stays decided (the log is
-- append-only), so any server may move it forward; a move lost to a crash only means scanning
-- a little again.
CREATE TABLE submission_checkpoint (
    singleton  boolean     NOT NULL DEFAULT true CHECK (singleton),
    position   bigint      NOT NULL CHECK (position >= 0),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT submission_checkpoint_pkey PRIMARY KEY (singleton)
);

REVOKE ALL ON submission_checkpoint FROM PUBLIC;
GRANT SELECT, INSERT, UPDATE ON submission_checkpoint TO ledger_app;
DO $$
BEGIN
    IF pg_has_role(current_user, 'ledger_owner', 'MEMBER') THEN
        ALTER TABLE submission_checkpoint OWNER TO ledger_owner;
    END IF;
END $$;

-- Where each named subscriber (projection, worker) has got to in the log, so it resumes there
-- after a restart. Unlike events, a checkpoint moves: it is state, not a fact.
CREATE TABLE subscription_checkpoints (
    name        text        NOT NULL CHECK (name <> '' AND length(name) <= 200),
    position    bigint      NOT NULL CHECK (position >= 0),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT subscription_checkpoints_pkey PRIMARY KEY (name)
);

REVOKE ALL ON subscription_checkpoints FROM PUBLIC;
GRANT SELECT, INSERT, UPDATE ON subscription_checkpoints TO ledger_app;
DO $$ BEGIN
    IF pg_has_role(current_user, 'ledger_owner', 'MEMBER') THEN
        ALTER TABLE subscription_checkpoints OWNER TO ledger_owner;
    END IF;
END $$;

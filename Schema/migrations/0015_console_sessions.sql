-- Console sign-ins (issue 18): who is signed in to the web console, until when. Sessions are
-- access state, not ledger facts, so they live beside the events, not in them, and may be
-- updated (signed out) and purged once expired. The cookie carries a random id; only its sha256
-- is kept here, so a dump of this table signs no one in.
CREATE TABLE console_sessions (
    id_sha256    bytea       NOT NULL CHECK (length(id_sha256) = 32),
    token_name   text        NOT NULL,
    role         text        NOT NULL CHECK (role IN ('finance', 'support')),
    csrf_token   text        NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    signed_out_at timestamptz,
    CONSTRAINT console_sessions_pkey PRIMARY KEY (id_sha256)
);
CREATE INDEX console_sessions_by_expiry ON console_sessions (expires_at);

REVOKE ALL ON console_sessions FROM PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON console_sessions TO ledger_app;
DO $$
BEGIN
    IF pg_has_role(current_user, 'ledger_owner', 'MEMBER') THEN
        ALTER TABLE console_sessions OWNER TO ledger_owner;
    END IF;
END $$;

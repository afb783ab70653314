-- The chain digests `serve` publishes (LEDGER_DIGEST_INTERVAL, issue 38): one row per
-- publication, the verified head it names and when. Not ledger events: a digest says where the
-- log stood, outside it. A restored database keeps the digests published before its target
-- time, and `verify --digest` checks the later ones, kept outside (LEDGER_DIGEST_FILE, the
-- receivers of `ledger.digest`), against it.
CREATE TABLE ledger_digests (
    position        bigint NOT NULL,
    hash            bytea  NOT NULL CHECK (octet_length(hash) = 32),
    -- Milliseconds since 1970, UTC, by the publishing server's clock: the body's timestamp.
    published_at_ms bigint NOT NULL,
    -- The `ledger.digest` webhook body as sent, byte for byte (its signature covers these bytes).
    body            text   NOT NULL,
    CONSTRAINT ledger_digests_pkey PRIMARY KEY (position)
);

GRANT SELECT, INSERT ON ledger_digests TO ledger_app;
DO $$ BEGIN
    IF pg_has_role(current_user, 'ledger_owner', 'MEMBER') THEN
        ALTER TABLE ledger_digests OWNER TO ledger_owner;
    END IF;
END $$;

-- Dispute timelines (ARCHITECTURE §5): which events concern each subject (transaction:ID,
-- order:ID, user:ID, submission:ID), and which subjects' timelines include another's. A
-- timeline reads the events by position from the log itself, so it shows exactly what was
-- recorded, and the chain check below vouches for those rows.
CREATE TABLE projection_timeline_events (
    subject  text   NOT NULL,
    position bigint NOT NULL,
    CONSTRAINT projection_timeline_events_pkey PRIMARY KEY (subject, position)
);

CREATE TABLE projection_timeline_links (
    subject  text NOT NULL,
    includes text NOT NULL,
    CONSTRAINT projection_timeline_links_pkey PRIMARY KEY (subject, includes)
);

-- How far the hash chain has been verified, incrementally, by the server (and by read
-- commands): a timeline says whether its events lie within the verified part.
CREATE TABLE chain_checkpoint (
    singleton boolean     NOT NULL DEFAULT true CHECK (singleton),
    position  bigint      NOT NULL CHECK (position >= 0),
    hash      bytea       NOT NULL CHECK (length(hash) = 32),
    -- Set when the chain does not verify at position + 1: verification stops there.
    broken    text,
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT chain_checkpoint_pkey PRIMARY KEY (singleton)
);

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['projection_timeline_events', 'projection_timeline_links', 'chain_checkpoint'] LOOP
        EXECUTE format('REVOKE ALL ON %I FROM PUBLIC', t);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO ledger_app', t);
        IF pg_has_role(current_user, 'ledger_owner', 'MEMBER') THEN
            EXECUTE format('ALTER TABLE %I OWNER TO ledger_owner', t);
        END IF;
    END LOOP;
END $$;

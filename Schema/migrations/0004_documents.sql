-- Verbatim evidence (ARCHITECTURE §3, CONTRACT "Evidence and roles"): receipts, Apple's
-- response bodies, signed transactions and notifications, stored once, named by the sha256 of
-- their bytes, and referenced by that name from events. The hash chain covers the reference;
-- `purchase-ledger verify` checks that every referenced document exists and hashes to its name.
-- The CHECK makes the name a promise the database keeps: no row can claim another's hash.
CREATE TABLE documents (
    sha256       bytea       NOT NULL CHECK (octet_length(sha256) = 32),
    kind         text        NOT NULL CHECK (kind <> '' AND length(kind) <= 64),
    content      bytea       NOT NULL,
    recorded_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT documents_pkey PRIMARY KEY (sha256),
    CONSTRAINT documents_content_matches_name CHECK (sha256 = sha256(content))
);

-- Evidence is as immutable as the events that cite it, for the owner too.
CREATE FUNCTION documents_reject_change() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
BEGIN
    RAISE EXCEPTION 'documents are append-only: % is not allowed', TG_OP
        USING ERRCODE = 'LE002';
END $$;

CREATE TRIGGER documents_90_immutable BEFORE UPDATE OR DELETE OR TRUNCATE ON documents
    FOR EACH STATEMENT EXECUTE FUNCTION documents_reject_change();

REVOKE ALL ON documents FROM PUBLIC;
GRANT SELECT, INSERT ON documents TO ledger_app;
DO $$ BEGIN
    IF pg_has_role(current_user, 'ledger_owner', 'MEMBER') THEN
        ALTER TABLE documents OWNER TO ledger_owner;
    END IF;
END $$;

-- Look-ups the purchase flow makes under load, each by a field of one event type only:
-- a user's orders (to match a receipt to its order), an order by the app_account_token the app
-- gave StoreKit, and submissions still waiting for Apple (the retry worker's set).
CREATE INDEX events_orders_by_user ON events ((payload->>'user_id'))
    WHERE event_type = 'OrderCreated';
CREATE INDEX events_orders_by_token ON events ((payload->>'app_account_token'))
    WHERE event_type = 'OrderCreated';
CREATE INDEX events_pending_submissions ON events (stream_id, stream_version)
    WHERE event_type = 'VerificationPending';

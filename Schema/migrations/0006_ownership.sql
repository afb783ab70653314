-- Ownership (ARCHITECTURE §5): who holds each original_transaction_id, every change of holder,
-- and which purchases belong to one Apple account. Rows derived from events, like 0005's.
CREATE TABLE projection_ownership (
    original_transaction_id text   NOT NULL,
    product_id              text   NOT NULL,
    kind                    text   NOT NULL,
    environment             text   NOT NULL,
    -- NULL once refunded or revoked.
    owner_user_id           text,
    -- The position of the event that made the current holder: the newest one wins.
    owner_position          bigint NOT NULL,
    CONSTRAINT projection_ownership_pkey PRIMARY KEY (original_transaction_id)
);

CREATE TABLE projection_ownership_history (
    original_transaction_id text   NOT NULL,
    position                bigint NOT NULL,
    recorded_at_ms          bigint NOT NULL,
    user_id                 text,
    reason                  text   NOT NULL,
    CONSTRAINT projection_ownership_history_pkey PRIMARY KEY (original_transaction_id, position)
);
CREATE INDEX projection_ownership_history_by_user ON projection_ownership_history (user_id);

-- A union-find of Apple accounts: each purchase points at its group's root, the group's
-- smallest original_transaction_id. The account's name is the group's appTransactionId when
-- Apple gave one, else 'otx:' || root (CONTRACT.md).
CREATE TABLE projection_apple_account_members (
    original_transaction_id text NOT NULL,
    root                    text NOT NULL,
    app_transaction_id      text,
    CONSTRAINT projection_apple_account_members_pkey PRIMARY KEY (original_transaction_id)
);
CREATE INDEX projection_apple_account_members_by_root ON projection_apple_account_members (root);
CREATE INDEX projection_apple_account_members_by_app ON projection_apple_account_members (app_transaction_id);

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['projection_ownership', 'projection_ownership_history', 'projection_apple_account_members'] LOOP
        EXECUTE format('REVOKE ALL ON %I FROM PUBLIC', t);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO ledger_app', t);
        IF pg_has_role(current_user, 'ledger_owner', 'MEMBER') THEN
            EXECUTE format('ALTER TABLE %I OWNER TO ledger_owner', t);
        END IF;
    END LOOP;
END $$;

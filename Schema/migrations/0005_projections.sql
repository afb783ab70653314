-- Read models (ARCHITECTURE §5): rows derived from the events by pure folds (Ledger's
-- `Projections`), rebuilt from the first event whenever a projection's version changes. Unlike
-- events they are state, so the application may change them; each projection's checkpoint is
-- written in the same transaction as its rows, so a crash between the two never double-counts.
CREATE TABLE projection_checkpoints (
    name        text        NOT NULL CHECK (name <> '' AND length(name) <= 100),
    version     integer     NOT NULL CHECK (version > 0),
    position    bigint      NOT NULL CHECK (position >= 0),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT projection_checkpoints_pkey PRIMARY KEY (name)
);

-- Balances: per user and grant unit, in whole units of that grant (coins). May go negative
-- when a consumable already spent is refunded: reported, not hidden.
CREATE TABLE projection_balances (
    user_id  text   NOT NULL,
    unit     text   NOT NULL,
    amount   bigint NOT NULL,
    CONSTRAINT projection_balances_pkey PRIMARY KEY (user_id, unit)
);

-- Entitlements: who holds each non-consumable and subscription, keyed by the
-- original_transaction_id that restores and renewals share.
CREATE TABLE projection_entitlements (
    original_transaction_id text    NOT NULL,
    user_id                 text    NOT NULL,
    product_id              text    NOT NULL,
    kind                    text    NOT NULL,
    environment             text    NOT NULL,
    revoked_at_ms           bigint,
    CONSTRAINT projection_entitlements_pkey PRIMARY KEY (original_transaction_id)
);
CREATE INDEX projection_entitlements_by_user ON projection_entitlements (user_id);

-- Subscriptions: every transaction Apple showed for a subscription (in_app,
-- latest_receipt_info, signed transactions, notifications), merged so that the order in which
-- they were seen does not matter, and the newest renewal information.
CREATE TABLE projection_subscription_entries (
    original_transaction_id text    NOT NULL,
    transaction_id          text    NOT NULL,
    product_id              text    NOT NULL,
    environment             text    NOT NULL,
    purchase_date_ms        bigint,
    expires_date_ms         bigint,
    cancellation_date_ms    bigint,
    is_trial                boolean NOT NULL,
    is_upgraded             boolean NOT NULL,
    CONSTRAINT projection_subscription_entries_pkey PRIMARY KEY (original_transaction_id, transaction_id)
);

CREATE TABLE projection_subscription_renewals (
    original_transaction_id  text    NOT NULL,
    observed_at_ms           bigint  NOT NULL,
    auto_renew               boolean,
    auto_renew_product_id    text,
    in_billing_retry         boolean,
    grace_period_expires_ms  bigint,
    CONSTRAINT projection_subscription_renewals_pkey PRIMARY KEY (original_transaction_id)
);

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['projection_checkpoints', 'projection_balances', 'projection_entitlements',
                             'projection_subscription_entries', 'projection_subscription_renewals'] LOOP
        EXECUTE format('REVOKE ALL ON %I FROM PUBLIC', t);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO ledger_app', t);
        IF pg_has_role(current_user, 'ledger_owner', 'MEMBER') THEN
            EXECUTE format('ALTER TABLE %I OWNER TO ledger_owner', t);
        END IF;
    END LOOP;
END $$;

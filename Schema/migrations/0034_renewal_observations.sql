-- Every renewal state Apple signed for a subscription (a notification's renewal info, a
-- receipt's pending_renewal_info), not only the newest: when a subscription was in a grace
-- period or billing retry, and when Apple stopped retrying, is read from these rows by the
-- finance reports (docs/finance-over-time.md). Written by the subscription_history projection,
-- whose first run fills it from the first event. Nothing here names a person.
CREATE TABLE projection_renewal_observations (
    original_transaction_id  text    NOT NULL,
    observed_at_ms           bigint  NOT NULL,
    -- Apple's is_in_billing_retry_period: 1 true, 0 false, -1 not said.
    in_billing_retry         smallint NOT NULL CHECK (in_billing_retry IN (-1, 0, 1)),
    -- 0: no grace period said.
    grace_period_expires_ms  bigint  NOT NULL,
    CONSTRAINT projection_renewal_observations_pkey
        PRIMARY KEY (original_transaction_id, observed_at_ms, in_billing_retry, grace_period_expires_ms)
);

GRANT SELECT, INSERT, UPDATE, DELETE ON projection_renewal_observations TO ledger_app;
DO $$
BEGIN
    IF pg_has_role(current_user, 'ledger_owner', 'MEMBER') THEN
        ALTER TABLE projection_renewal_observations OWNER TO ledger_owner;
    END IF;
END $$;

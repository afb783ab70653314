-- Several apps (docs/several-apps.md): read models say which app each row belongs to.
--
-- Balances become per app, user and unit. `projection_balances` cannot change its key and stay
-- usable by the previous release, which keeps serving on this database during a rolling upgrade
-- (its runner upserts on (user_id, unit)): the per-app balances are a new projection,
-- `app_balances`, built from the first event into a table of their own, and the old table is
-- left to the previous release's runner until a later release retires it.
CREATE TABLE projection_app_balances (
    bundle_id  text   NOT NULL,
    user_id    text   NOT NULL,
    unit       text   NOT NULL,
    amount     bigint NOT NULL,
    CONSTRAINT projection_app_balances_pkey PRIMARY KEY (bundle_id, user_id, unit)
);
CREATE INDEX projection_app_balances_by_user ON projection_app_balances (user_id);
GRANT SELECT, INSERT, UPDATE, DELETE ON projection_app_balances TO ledger_app;
DO $$
BEGIN
    IF pg_has_role(current_user, 'ledger_owner', 'MEMBER') THEN
        ALTER TABLE projection_app_balances OWNER TO ledger_owner;
    END IF;
END $$;

-- Entitlements and ownership are keyed by Apple's original transaction ids, unique across apps:
-- they only gain the app. NULL in rows written before this release, or by the previous release
-- serving beside it: both belong to the log's legacy app, which reads put in their place.
ALTER TABLE projection_entitlements ADD COLUMN bundle_id text;
ALTER TABLE projection_ownership ADD COLUMN bundle_id text;

-- Apple's price points per app (docs/several-apps.md): the same product id in two apps is two
-- products with Apple IDs, and so price points, of their own. The tables of 0021 keep their key
-- (product, refresh) for the previous release's runner during a rolling upgrade; this release's
-- revenue projection (version 10, rebuilt from the first event) writes and reads these instead.
CREATE TABLE projection_revenue_app_price_refreshes (
    bundle_id       text   NOT NULL,
    product_id      text   NOT NULL,
    refreshed_at_ms bigint NOT NULL,
    CONSTRAINT projection_revenue_app_price_refreshes_pkey PRIMARY KEY (bundle_id, product_id, refreshed_at_ms)
);

CREATE TABLE projection_revenue_app_price_points (
    bundle_id            text   NOT NULL,
    product_id           text   NOT NULL,
    refreshed_at_ms      bigint NOT NULL,
    -- ISO 3166-1 alpha-3, as App Store Connect names territories and StoreKit storefronts.
    territory            text   NOT NULL,
    currency             text   NOT NULL,
    customer_price_minor bigint NOT NULL,
    proceeds_minor       bigint NOT NULL,
    -- Subscriptions from their second year of paid service; NULL for in-app purchases.
    proceeds_year2_minor bigint,
    CONSTRAINT projection_revenue_app_price_points_pkey PRIMARY KEY (bundle_id, product_id, refreshed_at_ms, territory, customer_price_minor)
);

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['projection_revenue_app_price_refreshes', 'projection_revenue_app_price_points'] LOOP
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO ledger_app', t);
        IF pg_has_role(current_user, 'ledger_owner', 'MEMBER') THEN
            EXECUTE format('ALTER TABLE %I OWNER TO ledger_owner', t);
        END IF;
    END LOOP;
END $$;

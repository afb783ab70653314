-- A sale's proceeds are those of Apple's price point for its storefront and customer price, from
-- the latest refresh recorded at or before its purchase (the first refresh for a sale dated
-- earlier) (CONTRACT.md "Money"). Each refresh's points are kept per product, and each line keeps
-- the refresh that prices it and that point's proceeds per unit (both years), so a report reads
-- them without a look-up per line. NULL proceeds: no point matched, the commission plan
-- estimates. The rows are derived; the revenue projection's version changed with these columns,
-- so its runner empties and rebuilds them from the first event.
CREATE TABLE projection_revenue_price_refreshes (
    product_id      text   NOT NULL,
    refreshed_at_ms bigint NOT NULL,
    CONSTRAINT projection_revenue_price_refreshes_pkey PRIMARY KEY (product_id, refreshed_at_ms)
);

CREATE TABLE projection_revenue_price_points (
    product_id           text   NOT NULL,
    refreshed_at_ms      bigint NOT NULL,
    -- ISO 3166-1 alpha-3, as App Store Connect names territories and StoreKit storefronts.
    territory            text   NOT NULL,
    currency             text   NOT NULL,
    customer_price_minor bigint NOT NULL,
    proceeds_minor       bigint NOT NULL,
    -- Subscriptions from their second year of paid service; NULL for in-app purchases.
    proceeds_year2_minor bigint,
    CONSTRAINT projection_revenue_price_points_pkey PRIMARY KEY (product_id, refreshed_at_ms, territory, customer_price_minor)
);

ALTER TABLE projection_revenue_lines
    ADD COLUMN point_refreshed_at_ms bigint,
    ADD COLUMN point_proceeds_minor bigint,
    ADD COLUMN point_proceeds_year2_minor bigint;

-- A refresh prices again the lines of its product purchased from its time on.
CREATE INDEX projection_revenue_lines_by_product ON projection_revenue_lines (product_id, purchase_date_ms);

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['projection_revenue_price_refreshes', 'projection_revenue_price_points'] LOOP
        EXECUTE format('REVOKE ALL ON %I FROM PUBLIC', t);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO ledger_app', t);
        IF pg_has_role(current_user, 'ledger_owner', 'MEMBER') THEN
            EXECUTE format('ALTER TABLE %I OWNER TO ledger_owner', t);
        END IF;
    END LOOP;
END $$;

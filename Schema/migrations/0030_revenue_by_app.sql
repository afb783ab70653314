-- Revenue by app (docs/several-apps.md). Each revenue line names its app; NULL in lines written
-- before this release, or by the previous release serving beside it, which belong to the log's
-- legacy app (reads put it in their place).
ALTER TABLE projection_revenue_lines ADD COLUMN bundle_id text;

-- Catalog prices per app: the same product id in two apps is two products with prices of their
-- own. `projection_revenue_prices` keeps its key (product, effective time) for the previous
-- release's runner during a rolling upgrade; this release's revenue projection (version 9,
-- rebuilt from the first event) writes and reads this table instead.
CREATE TABLE projection_revenue_catalog_prices (
    bundle_id    text   NOT NULL,
    product_id   text   NOT NULL,
    -- When the catalog load was recorded: it prices sales purchased from then on.
    effective_ms bigint NOT NULL,
    price_minor  bigint NOT NULL,
    currency     text   NOT NULL,
    CONSTRAINT projection_revenue_catalog_prices_pkey PRIMARY KEY (bundle_id, product_id, effective_ms)
);
GRANT SELECT, INSERT, UPDATE, DELETE ON projection_revenue_catalog_prices TO ledger_app;
DO $$
BEGIN
    IF pg_has_role(current_user, 'ledger_owner', 'MEMBER') THEN
        ALTER TABLE projection_revenue_catalog_prices OWNER TO ledger_owner;
    END IF;
END $$;

-- A sale without Apple's price takes the catalog's price as it stood when the purchase was made
-- (CONTRACT.md, "Catalog file"), not the latest: every load of the catalog is kept, from the
-- time it was recorded. The rows are derived; the revenue projection's version changed with
-- this table, so its runner rebuilds them from the first event.
TRUNCATE projection_revenue_prices;
ALTER TABLE projection_revenue_prices ADD COLUMN effective_ms bigint NOT NULL;
ALTER TABLE projection_revenue_prices DROP CONSTRAINT projection_revenue_prices_pkey;
ALTER TABLE projection_revenue_prices ADD CONSTRAINT projection_revenue_prices_pkey PRIMARY KEY (product_id, effective_ms);

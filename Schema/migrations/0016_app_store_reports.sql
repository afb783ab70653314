-- App Store Connect's reports count units, and a consumable may be bought several at once:
-- each revenue line keeps the quantity it is for, so the ledger's side of a report cell counts
-- units the way Apple's does. The rows are derived; the revenue projection's version changed
-- with this column, so its runner empties and rebuilds them from the first event.
ALTER TABLE projection_revenue_lines ADD COLUMN quantity bigint NOT NULL DEFAULT 1 CHECK (quantity > 0);

-- The reconciliation page lists the App Store Connect reports imported, newest first.
CREATE INDEX events_app_store_reports ON events (position) WHERE event_type = 'AppStoreReportImported';

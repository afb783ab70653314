-- Revenue by offer (issue 26): each line keeps the offer that priced its sale (Apple's
-- `offerIdentifier`, a receipt's `promotional_offer_id`), a refund's and a reversal's their
-- sale's. The revenue projection's version changed with it (8): it rebuilds from the first event.
ALTER TABLE projection_revenue_lines ADD COLUMN offer_id text;

-- A spend reads the user's grants and refunds from the log (Wallet) in the statement that reads
-- the wallet stream's version it will append at: this finds them by user without a scan.
CREATE INDEX events_grants_by_user ON events ((payload->>'user_id'))
    WHERE event_type IN ('PurchaseDelivered', 'PurchaseRefunded');

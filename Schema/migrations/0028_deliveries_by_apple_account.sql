-- Reconciliation's recovery after a restore (issue 38) places a purchase Apple knows and the log
-- lost with the user the same Apple account's other purchases were delivered to: their
-- `app_transaction_id` (one per Apple account and app) names them. Read only by that recovery, it
-- must not scan the whole log for each purchase it recovers.
CREATE INDEX events_delivered_by_app_transaction ON events ((payload->>'app_transaction_id'))
    WHERE event_type = 'PurchaseDelivered';

-- The consumption worker's set: CONSUMPTION_REQUEST notifications the ledger has not answered.
CREATE INDEX events_consumption_requests ON events (position)
    WHERE event_type = 'AppleNotificationReceived' AND payload->>'notification_type' = 'CONSUMPTION_REQUEST';

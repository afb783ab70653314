-- Webhook ids name their ledger event's chain hash (evt_POSITION_HASH16_K, issue 38): after a
-- point-in-time restore, an event written at the position of a lost one has another hash, so its
-- messages have other ids and a receiver that deduplicates by id never drops them as seen. The
-- column holds the hash's first 16 hex digits; the body's data.hash holds all of it. Existing rows
-- get '' here and are made again with their hash: the projection's version moves to 4, and the
-- runner rebuilds it from the first event (the ids change once, CHANGELOG.md).
ALTER TABLE projection_webhook_events ADD COLUMN hash_prefix text NOT NULL DEFAULT '';

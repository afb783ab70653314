-- Each webhook message names its app in a column of its own, as its body does (`data.bundle_id`):
-- the feed read with a token limited to one app selects that app's messages by it, instead of
-- parsing every stored body it passes over. NULL in rows written before, or by the previous
-- release serving beside it, which are the log's legacy app's. The webhook_events projection's
-- version 6 fills it from the first event when the new `serve` starts.
ALTER TABLE projection_webhook_events ADD COLUMN bundle_id text;

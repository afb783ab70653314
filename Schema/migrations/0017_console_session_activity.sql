-- Console sessions end after 30 minutes without a request, besides their 8 hours from sign-in
-- (issue 23): the time of each session's latest request, on the ledger's clock as the console
-- writes it. Sessions open when this runs count as seen now.
ALTER TABLE console_sessions ADD COLUMN last_seen_at timestamptz NOT NULL DEFAULT now();

-- The retry worker's second set: submissions whose stream holds only ReceiptSubmitted (their
-- request died before a decision). It scans them in position order from the last point it
-- found decided; this index lets that scan, and the first one after a start, read submissions
-- only instead of the whole log.
CREATE INDEX events_submissions ON events (position)
    WHERE event_type = 'ReceiptSubmitted';

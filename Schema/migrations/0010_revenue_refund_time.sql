-- A refund line keeps the instant of the refund, not only its day: a refunded sale stops
-- counting toward the subscription's year of paid service for sales made after that instant
-- (Apple: "paid days stopped when the refund occurred"). NULL on sale lines. The rows are
-- derived; the revenue projection's version changed with this column, so its runner empties
-- and rebuilds them from the first event.
ALTER TABLE projection_revenue_lines ADD COLUMN refunded_at_ms bigint;

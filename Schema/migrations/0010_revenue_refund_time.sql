-- A refunded sale stops counting toward the subscription's year of paid service for sales made
-- after the refund (Apple: "paid days stopped when the refund occurred"), so the sale line and
-- its refund line keep the refund's instant (NULL on a sale not refunded). Rating a sale reads
-- the subscription's earlier sales in date order: the index by original transaction now also
-- holds the purchase date. The rows are derived; the revenue projection's version changed with
-- this column, so its runner empties and rebuilds them from the first event.
ALTER TABLE projection_revenue_lines ADD COLUMN refunded_at_ms bigint;
DROP INDEX projection_revenue_lines_by_original;
CREATE INDEX projection_revenue_lines_by_original ON projection_revenue_lines (original_transaction_id, purchase_date_ms);

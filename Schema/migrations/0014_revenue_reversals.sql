-- Apple reverses refunds (REFUND_REVERSED): the sale counts again, as a line of its own dated
-- the day of the reversal, so the refund's period keeps the refund. Its amount is the sale's,
-- positive; reports net it against refunds.
ALTER TABLE projection_revenue_lines DROP CONSTRAINT projection_revenue_lines_line_type_check;
ALTER TABLE projection_revenue_lines ADD CONSTRAINT projection_revenue_lines_line_type_check
    CHECK (line_type IN ('sale', 'refund', 'reversal'));

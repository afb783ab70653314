-- Apple refunds a share of a purchase (revocationType REFUND_PRORATED, revocationPercentage in
-- thousandths of a percent; an upgraded subscription's unused share): a refund line, and the
-- reversal of one, moves round-half-up(sale gross × fraction_milli / 100000), and its commission
-- and proceeds are that share of the sale's, so each line keeps the share it moves and the gross
-- of the sale it is a share of. A sale line, and every line written before, moves all of it
-- (100000; sale_gross_minor NULL: the line's own gross is the sale's). The rows are derived; the
-- revenue projection's version changed with these columns, so its runner empties and rebuilds
-- them from the first event.
ALTER TABLE projection_revenue_lines
    ADD COLUMN fraction_milli bigint NOT NULL DEFAULT 100000 CHECK (fraction_milli BETWEEN 0 AND 100000),
    ADD COLUMN sale_gross_minor bigint;

-- Revenue (ARCHITECTURE §5): one line per paid transaction and one per refund, derived from
-- events. Amounts are integer minor units of the line's currency; commission is applied when
-- reporting, from reduced_rate and LEDGER_COMMISSION, so the rows do not depend on configuration.
CREATE TABLE projection_revenue_prices (
    product_id  text   NOT NULL,
    price_minor bigint NOT NULL,
    currency    text   NOT NULL,
    CONSTRAINT projection_revenue_prices_pkey PRIMARY KEY (product_id)
);

CREATE TABLE projection_revenue_lines (
    -- 'sale:' or 'refund:' and the transaction id: each transaction is counted once.
    line_id                 text    NOT NULL,
    line_type               text    NOT NULL CHECK (line_type IN ('sale', 'refund')),
    transaction_id          text    NOT NULL,
    original_transaction_id text    NOT NULL,
    product_id              text    NOT NULL,
    kind                    text    NOT NULL,
    user_id                 text    NOT NULL,
    environment             text    NOT NULL,
    -- The UTC day the money moved: the purchase for a sale, the refund for a refund.
    day                     date    NOT NULL,
    purchase_date_ms        bigint  NOT NULL,
    service_ms              bigint,
    currency                text    NOT NULL,
    -- Negative for a refund.
    gross_minor             bigint  NOT NULL,
    -- A subscription with a year of paid service before this sale: 15% under the standard plan.
    reduced_rate            boolean NOT NULL,
    CONSTRAINT projection_revenue_lines_pkey PRIMARY KEY (line_id)
);
CREATE INDEX projection_revenue_lines_by_day ON projection_revenue_lines (environment, day);
CREATE INDEX projection_revenue_lines_by_original ON projection_revenue_lines (original_transaction_id);

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['projection_revenue_prices', 'projection_revenue_lines'] LOOP
        EXECUTE format('REVOKE ALL ON %I FROM PUBLIC', t);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO ledger_app', t);
        IF pg_has_role(current_user, 'ledger_owner', 'MEMBER') THEN
            EXECUTE format('ALTER TABLE %I OWNER TO ledger_owner', t);
        END IF;
    END LOOP;
END $$;

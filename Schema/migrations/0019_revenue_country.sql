-- A sale's country is its storefront (CONTRACT.md "Money"): the ISO 3166-1 alpha-3 code Apple
-- signs with a transaction, 'unknown' where Apple never said (a receipt carries none); refund and
-- reversal lines take their sale's, so revenue groups by country. apple_price says a line's gross
-- is Apple's signed price rather than the catalog's, so Apple's Get Transaction Info, asked for a
-- sale seen only in a receipt, prices only lines the catalog priced. Its answers are kept per
-- transaction, so a sale recorded after the answer takes it too. The rows are derived; the
-- revenue projection's version changed with these columns, so its runner empties and rebuilds
-- them from the first event.
ALTER TABLE projection_revenue_lines
    ADD COLUMN country text NOT NULL DEFAULT 'unknown',
    ADD COLUMN apple_price boolean NOT NULL DEFAULT false;

CREATE TABLE projection_revenue_transaction_info (
    transaction_id text   NOT NULL,
    -- ISO 3166-1 alpha-3; NULL when Apple's answer named none.
    country        text,
    -- Apple's price for the whole transaction, in minor units of currency (ISO 4217); both NULL
    -- when Apple's answer had no price in a currency the ledger books.
    price_minor    bigint,
    currency       text,
    CONSTRAINT projection_revenue_transaction_info_pkey PRIMARY KEY (transaction_id),
    CONSTRAINT projection_revenue_transaction_info_price CHECK ((price_minor IS NULL) = (currency IS NULL))
);

REVOKE ALL ON projection_revenue_transaction_info FROM PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON projection_revenue_transaction_info TO ledger_app;
DO $$
BEGIN
    IF pg_has_role(current_user, 'ledger_owner', 'MEMBER') THEN
        ALTER TABLE projection_revenue_transaction_info OWNER TO ledger_owner;
    END IF;
END $$;

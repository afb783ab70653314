-- Commitment plans (App Store Server API 1.21): a subscription billed monthly against a 12-month
-- commitment is twelve transactions, each an instalment priced by Apple's signed price, each
-- numbered in the commitment (billingPeriodNumber of totalBillingPeriods, the commitment's price
-- and end). Each subscription entry keeps what Apple signed of its transaction, so the
-- subscriptions page can say where a commitment stands (instalment k of n) and what is still to
-- come (the instalment × (n − k)), and MRR counts a monthly instalment as it is. All NULL for a
-- transaction seen only in a receipt, and outside a commitment. Merged like purchase_date_ms:
-- the first copy of a transaction that knows a value keeps it.
--   billing_plan_type            Apple's billingPlanType as sent (BILLED_UPFRONT, MONTHLY, or a
--                                value Apple adds later)
--   commitment_period_number     billingPeriodNumber: the instalment this transaction pays
--   commitment_total_periods     totalBillingPeriods
--   commitment_price_milliunits  commitmentPrice: the whole commitment, milliunits of currency
--   commitment_expires_ms        commitmentExpiresDate, milliseconds since 1970, UTC
--   price_milliunits, currency   Apple's price of the transaction (the instalment), ISO 4217
-- The rows are derived; the subscriptions projection's version changed with these columns, so
-- its runner empties and rebuilds them from the first event.
ALTER TABLE projection_subscription_entries
    ADD COLUMN billing_plan_type           text,
    ADD COLUMN commitment_period_number    bigint,
    ADD COLUMN commitment_total_periods    bigint,
    ADD COLUMN commitment_price_milliunits bigint,
    ADD COLUMN commitment_expires_ms       bigint,
    ADD COLUMN price_milliunits            bigint,
    ADD COLUMN currency                    text;

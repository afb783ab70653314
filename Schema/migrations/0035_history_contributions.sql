-- What each subscription adds to the subscriptions report (docs/finance-over-time.md), summed,
-- so that a report reads a few rows per period instead of every subscription's history: at
-- 20,000,000 events a year's report read 472,334 histories and took 8 s (docs/benchmarks.md).
-- A cache of the projections, not a projection: the history summarizer in `serve` keeps it,
-- and a report corrects it for the subscriptions whose inputs changed since (history_dirty),
-- so an answer is always that of the projections it reads. Nothing here names a person.

-- The sums. granularity 'state' holds differences by day (a state's first day +1, the day after
-- its last -1): a state at a period's end is the sum of the rows up to its last day. 'day',
-- 'week' and 'month' hold the figures of events (new, churn, movement...) by period start day,
-- one set per granularity since they do not add up across granularities. product_id '' is all
-- products (an upgrade is no churn there); currency '' holds the counts, a currency its money.
CREATE TABLE history_contributions (
    environment                text    NOT NULL,
    bundle_id                  text    NOT NULL,
    product_id                 text    NOT NULL,
    granularity                text    NOT NULL CHECK (granularity IN ('state', 'day', 'week', 'month')),
    period_day                 integer NOT NULL,
    currency                   text    NOT NULL,
    active                     bigint  NOT NULL,
    in_trial                   bigint  NOT NULL,
    in_grace_period            bigint  NOT NULL,
    in_billing_retry           bigint  NOT NULL,
    new                        bigint  NOT NULL,
    churned                    bigint  NOT NULL,
    reactivated                bigint  NOT NULL,
    trials_started             bigint  NOT NULL,
    trials_converted           bigint  NOT NULL,
    mrr_minor                  bigint  NOT NULL,
    -- How many pay in the currency (a currency is listed while one does) and how many moved
    -- in it (a movement of 0 is still listed).
    paying                     bigint  NOT NULL,
    movers                     bigint  NOT NULL,
    movement_new_minor         bigint  NOT NULL,
    movement_expansion_minor   bigint  NOT NULL,
    movement_contraction_minor bigint  NOT NULL,
    movement_churn_minor       bigint  NOT NULL,
    movement_reactivation_minor bigint NOT NULL,
    CONSTRAINT history_contributions_pkey
        PRIMARY KEY (environment, granularity, product_id, bundle_id, period_day, currency)
);

-- Each subscription's intervals as last summed (JSON), so that its old contributions can be
-- taken out when its history changes.
CREATE TABLE history_subscriptions (
    original_transaction_id text NOT NULL,
    environment             text NOT NULL,
    bundle_id               text NOT NULL,
    intervals               text NOT NULL,
    CONSTRAINT history_subscriptions_pkey PRIMARY KEY (original_transaction_id)
);

-- The subscriptions whose inputs changed since they were last summed: marked by the triggers
-- below in the projection runner's own transaction, so none is missed.
CREATE TABLE history_dirty (
    original_transaction_id text NOT NULL,
    CONSTRAINT history_dirty_pkey PRIMARY KEY (original_transaction_id)
);

-- The commission plan the money was summed under (one row): a server configured with another
-- sums again from the start.
CREATE TABLE history_summary (
    only_row        boolean NOT NULL DEFAULT true CHECK (only_row),
    commission_plan text    NOT NULL,
    CONSTRAINT history_summary_pkey PRIMARY KEY (only_row)
);

CREATE FUNCTION history_mark_dirty() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO history_dirty (original_transaction_id)
    SELECT DISTINCT original_transaction_id FROM history_changed_rows WHERE original_transaction_id IS NOT NULL
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;

-- The same for a table of every kind of product (entitlements, revenue lines): only
-- subscriptions have a history.
CREATE FUNCTION history_mark_dirty_subscriptions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO history_dirty (original_transaction_id)
    SELECT DISTINCT original_transaction_id FROM history_changed_rows
    WHERE original_transaction_id IS NOT NULL AND kind = 'auto_renewable'
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;

-- The triggers of one table of the history's inputs, one per event, since a transition table
-- may serve one event only (a replay's swap makes a replaced table's triggers again from their
-- definitions: `LIKE` copies none).
CREATE FUNCTION history_watch(tab regclass) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    event text;
    rows text;
    mark text := CASE WHEN EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = tab AND attname = 'kind' AND NOT attisdropped)
                      THEN 'history_mark_dirty_subscriptions' ELSE 'history_mark_dirty' END;
BEGIN
    FOREACH event IN ARRAY ARRAY['insert', 'update', 'delete'] LOOP
        CONTINUE WHEN EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = tab AND tgname = 'history_dirty_on_' || event);
        rows := CASE event WHEN 'delete' THEN 'OLD' ELSE 'NEW' END;
        EXECUTE format('CREATE TRIGGER %I AFTER %s ON %s REFERENCING %s TABLE AS history_changed_rows '
                       'FOR EACH STATEMENT EXECUTE FUNCTION %I()', 'history_dirty_on_' || event, upper(event), tab, rows, mark);
    END LOOP;
END $$;

-- Who holds it (and in which app), its transactions, its renewal states and its prices.
SELECT history_watch('projection_entitlements');
SELECT history_watch('projection_subscription_entries');
SELECT history_watch('projection_renewal_observations');
SELECT history_watch('projection_revenue_lines');

-- Every subscription is summed once by the first serve of this release.
INSERT INTO history_dirty (original_transaction_id)
SELECT original_transaction_id FROM projection_entitlements WHERE kind = 'auto_renewable'
ON CONFLICT DO NOTHING;

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['history_contributions', 'history_subscriptions', 'history_dirty', 'history_summary'] LOOP
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO ledger_app', t);
        IF pg_has_role(current_user, 'ledger_owner', 'MEMBER') THEN
            EXECUTE format('ALTER TABLE %I OWNER TO ledger_owner', t);
        END IF;
    END LOOP;
    IF pg_has_role(current_user, 'ledger_owner', 'MEMBER') THEN
        ALTER FUNCTION history_mark_dirty() OWNER TO ledger_owner;
        ALTER FUNCTION history_mark_dirty_subscriptions() OWNER TO ledger_owner;
        ALTER FUNCTION history_watch(regclass) OWNER TO ledger_owner;
    END IF;
END $$;

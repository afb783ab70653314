-- Webhooks (issue 25, CONTRACT.md "Webhooks"). The log is the outbox: the messages are a
-- projection of it (projection_webhook_events, rebuilt like any other, the same ids and bytes
-- every time), and what each endpoint was sent is delivery state beside it, never in it.

-- Every message of every ledger event, in log order: (position, sequence) is its id.
CREATE TABLE projection_webhook_events (
    position bigint  NOT NULL,
    sequence integer NOT NULL,
    -- Whose message it is: one user's messages reach an endpoint in this order.
    user_id  text,
    type     text    NOT NULL,
    -- The body as sent, byte for byte (its signature covers these bytes).
    body     text    NOT NULL,
    CONSTRAINT projection_webhook_events_pkey PRIMARY KEY (position, sequence)
);

-- What the messages of later events depend on (running balances, what a subscription's messages
-- last told), per key, as JSON: WebhookFold's states.
CREATE TABLE projection_webhook_state (
    key   text NOT NULL,
    state text NOT NULL,
    CONSTRAINT projection_webhook_state_pkey PRIMARY KEY (key)
);

-- One row per endpoint of LEDGER_WEBHOOKS: every message at or before `position` reached it
-- (a 2xx) or waits in webhook_outstanding. The lease names the server delivering to it now, so
-- several servers on one database send each message once per attempt, not once each.
CREATE TABLE webhook_endpoints (
    name              text        NOT NULL CHECK (name ~ '^[a-z0-9_-]+$'),
    url               text        NOT NULL,
    position          bigint      NOT NULL DEFAULT 0,
    lease_owner       text,
    lease_expires_at  timestamptz,
    delivered         bigint      NOT NULL DEFAULT 0,
    failed_attempts   bigint      NOT NULL DEFAULT 0,
    last_delivered_at timestamptz,
    last_error        text,
    last_error_at     timestamptz,
    CONSTRAINT webhook_endpoints_pkey PRIMARY KEY (name)
);

-- Messages at or before an endpoint's position not yet acknowledged: one that failed (retried
-- at next_attempt_at), one waiting behind an earlier message of its user, or one asked for again
-- (`webhooks redeliver`). A user's earliest row is the next of theirs to send.
CREATE TABLE webhook_outstanding (
    endpoint        text        NOT NULL REFERENCES webhook_endpoints (name),
    position        bigint      NOT NULL,
    sequence        integer     NOT NULL,
    -- user_id, or '' for a message that is no one's (those keep their order among themselves).
    user_key        text        NOT NULL,
    attempts        integer     NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    last_error      text,
    CONSTRAINT webhook_outstanding_pkey PRIMARY KEY (endpoint, position, sequence)
);
CREATE INDEX webhook_outstanding_by_user ON webhook_outstanding (endpoint, user_key, position, sequence);

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['projection_webhook_events', 'projection_webhook_state', 'webhook_endpoints', 'webhook_outstanding'] LOOP
        EXECUTE format('REVOKE ALL ON %I FROM PUBLIC', t);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO ledger_app', t);
        IF pg_has_role(current_user, 'ledger_owner', 'MEMBER') THEN
            EXECUTE format('ALTER TABLE %I OWNER TO ledger_owner', t);
        END IF;
    END LOOP;
END $$;

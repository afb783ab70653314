-- The append-only event log (ARCHITECTURE §3). Never edit this file after release: add a new
-- numbered migration instead; `purchase-ledger migrate` refuses an edited, applied migration.

-- Roles are cluster-wide while the log lives in a schema, so several schemas (and several
-- processes) may race to create them: the loser's error is expected and ignored.
DO $$ BEGIN
    CREATE ROLE ledger_owner NOLOGIN;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;
DO $$ BEGIN
    CREATE ROLE ledger_app NOLOGIN;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;

CREATE TABLE events (
    -- Drawn by the insert trigger under a transaction-level advisory lock, so positions are
    -- gapless and position order is commit order: a reader of "after P" never skips one.
    position        bigint      NOT NULL,
    stream_id       text        NOT NULL CHECK (stream_id <> '' AND length(stream_id) <= 512),
    stream_version  bigint      NOT NULL CHECK (stream_version > 0),
    event_id        uuid        NOT NULL,
    event_type      text        NOT NULL CHECK (event_type <> '' AND length(event_type) <= 256),
    schema_version  integer     NOT NULL CHECK (schema_version > 0),
    payload         jsonb       NOT NULL,
    metadata        jsonb       NOT NULL DEFAULT '{}'::jsonb,
    idempotency_key text        CHECK (idempotency_key <> '' AND length(idempotency_key) <= 512),
    recorded_at     timestamptz NOT NULL,
    previous_hash   bytea       NOT NULL CHECK (octet_length(previous_hash) = 32),
    hash            bytea       NOT NULL CHECK (octet_length(hash) = 32),
    CONSTRAINT events_pkey PRIMARY KEY (position),
    CONSTRAINT events_stream_version_key UNIQUE (stream_id, stream_version),
    CONSTRAINT events_event_id_key UNIQUE (event_id),
    CONSTRAINT events_idempotency_key_key UNIQUE (idempotency_key)
);

CREATE INDEX events_event_type_position_idx ON events (event_type, position);
CREATE INDEX events_recorded_at_idx ON events (recorded_at);

-- The bytes each hash covers. Every field is length-prefixed ("<octets>:<text>") or "~" for
-- NULL, so no two different events share the same bytes. `purchase-ledger verify` rebuilds
-- exactly these bytes in Swift from the stored columns, independently of this function.
CREATE FUNCTION events_canonical_bytes(
    p_position bigint, p_stream_id text, p_stream_version bigint, p_event_id uuid,
    p_event_type text, p_schema_version integer, p_payload jsonb, p_metadata jsonb,
    p_idempotency_key text, p_recorded_at timestamptz
) RETURNS bytea LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path FROM CURRENT
AS $$
    SELECT convert_to(string_agg(
        CASE WHEN f IS NULL THEN '~' ELSE octet_length(f)::text || ':' || f END, '' ORDER BY n), 'UTF8')
    FROM unnest(ARRAY[
        p_position::text, p_stream_id, p_stream_version::text, p_event_id::text, p_event_type,
        p_schema_version::text, p_payload::text, p_metadata::text, p_idempotency_key,
        ((extract(epoch FROM p_recorded_at) * 1000000)::bigint)::text
    ]) WITH ORDINALITY AS t(f, n)
$$;

-- Takes the append lock once per statement: every writer of this schema's log, whatever
-- client it uses, commits one at a time, so positions are handed out in commit order.
CREATE FUNCTION events_lock_for_append() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(1279608903, hashtext(TG_TABLE_SCHEMA));
    RETURN NULL;
END $$;

-- Draws the position, checks the expected stream version and extends the hash chain. The
-- caller sends stream_version NULL for "any version" or the exact next version it expects.
CREATE FUNCTION events_before_insert() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
DECLARE
    last_position bigint;
    last_hash bytea;
    current_version bigint;
BEGIN
    -- Held already by the statement trigger; taken again (it is re-entrant) so a row can never
    -- be numbered outside the lock even if that trigger were disabled.
    PERFORM pg_advisory_xact_lock(1279608903, hashtext(TG_TABLE_SCHEMA));
    SELECT e.position, e.hash INTO last_position, last_hash
        FROM events e ORDER BY e.position DESC LIMIT 1;
    SELECT max(e.stream_version) INTO current_version
        FROM events e WHERE e.stream_id = NEW.stream_id;
    current_version := coalesce(current_version, 0);
    IF NEW.stream_version IS NULL THEN
        NEW.stream_version := current_version + 1;
    ELSIF NEW.stream_version <> current_version + 1 THEN
        RAISE EXCEPTION 'wrong expected version'
            USING ERRCODE = 'LE001',
                  DETAIL = format('stream is at version %s; the append expected %s',
                                  current_version, NEW.stream_version - 1);
    END IF;
    NEW.position := coalesce(last_position, 0) + 1;
    NEW.recorded_at := now();
    NEW.previous_hash := coalesce(last_hash, '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea);
    NEW.hash := sha256(NEW.previous_hash || events_canonical_bytes(
        NEW.position, NEW.stream_id, NEW.stream_version, NEW.event_id, NEW.event_type,
        NEW.schema_version, NEW.payload, NEW.metadata, NEW.idempotency_key, NEW.recorded_at));
    RETURN NEW;
END $$;

-- Wakes tailing subscribers once per committed statement (NOTIFY is delivered at commit).
CREATE FUNCTION events_notify_appended() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
BEGIN
    PERFORM pg_notify(TG_TABLE_SCHEMA || '.events', '');
    RETURN NULL;
END $$;

-- Events are facts: nobody changes or removes them, not even the table's owner.
CREATE FUNCTION events_reject_change() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
BEGIN
    RAISE EXCEPTION 'events are append-only: % is not allowed', TG_OP
        USING ERRCODE = 'LE002';
END $$;

CREATE TRIGGER events_00_lock BEFORE INSERT ON events
    FOR EACH STATEMENT EXECUTE FUNCTION events_lock_for_append();
CREATE TRIGGER events_10_chain BEFORE INSERT ON events
    FOR EACH ROW EXECUTE FUNCTION events_before_insert();
CREATE TRIGGER events_20_notify AFTER INSERT ON events
    FOR EACH STATEMENT EXECUTE FUNCTION events_notify_appended();
CREATE TRIGGER events_90_immutable BEFORE UPDATE OR DELETE OR TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION events_reject_change();

-- The application may add and read facts, nothing else.
REVOKE ALL ON events FROM PUBLIC;
GRANT SELECT, INSERT ON events TO ledger_app;
DO $$ BEGIN
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO ledger_app, ledger_owner', current_schema());
    IF pg_has_role(current_user, 'ledger_owner', 'MEMBER') THEN
        ALTER TABLE events OWNER TO ledger_owner;
    END IF;
END $$;

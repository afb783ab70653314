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

-- Takes the append lock once per statement: every writer of this schema's log, whatever
-- client it uses, commits one at a time, so positions are handed out in commit order. Then
-- reads the head of the chain once (this query's snapshot is taken after the lock, so it sees
-- every commit before ours) and keeps it in a transaction-local setting that the row trigger
-- advances: one index lookup per statement instead of one per row.
CREATE FUNCTION events_lock_for_append() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
DECLARE
    head_position bigint;
    head_hash bytea;
BEGIN
    PERFORM pg_advisory_xact_lock(1279608903, hashtext(TG_TABLE_SCHEMA));
    SELECT e.position, e.hash INTO head_position, head_hash FROM events e ORDER BY e.position DESC LIMIT 1;
    PERFORM set_config('purchase_ledger.head_position', coalesce(head_position, 0)::text, true),
            set_config('purchase_ledger.head_hash',
                       encode(coalesce(head_hash, '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea), 'hex'),
                       true);
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
    payload_text text;
    metadata_text text;
    recorded_text text;
BEGIN
    -- The statement trigger holds the append lock and left the chain's head here.
    last_position := current_setting('purchase_ledger.head_position')::bigint;
    last_hash := decode(current_setting('purchase_ledger.head_hash'), 'hex');
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
    NEW.position := last_position + 1;
    NEW.recorded_at := now();
    NEW.previous_hash := last_hash;
    -- The bytes the hash covers: every field as "<UTF-8 octets>:<text>", or "~" for NULL, so
    -- no two different events share the same bytes. `purchase-ledger verify` rebuilds exactly
    -- these bytes in Swift from the stored columns (ChainRow.canonicalBytes), independently of
    -- this code. Written out here rather than as a SQL function: a function called per row
    -- was planned again for every row and cost more than the rest of the insert together.
    payload_text := NEW.payload::text;
    metadata_text := NEW.metadata::text;
    recorded_text := ((extract(epoch FROM NEW.recorded_at) * 1000000)::bigint)::text;
    NEW.hash := sha256(NEW.previous_hash || convert_to(
        octet_length(NEW.position::text) || ':' || NEW.position::text
        || octet_length(NEW.stream_id) || ':' || NEW.stream_id
        || octet_length(NEW.stream_version::text) || ':' || NEW.stream_version::text
        || octet_length(NEW.event_id::text) || ':' || NEW.event_id::text
        || octet_length(NEW.event_type) || ':' || NEW.event_type
        || octet_length(NEW.schema_version::text) || ':' || NEW.schema_version::text
        || octet_length(payload_text) || ':' || payload_text
        || octet_length(metadata_text) || ':' || metadata_text
        || CASE WHEN NEW.idempotency_key IS NULL THEN '~'
                ELSE octet_length(NEW.idempotency_key) || ':' || NEW.idempotency_key END
        || octet_length(recorded_text) || ':' || recorded_text, 'UTF8'));
    last_position := set_config('purchase_ledger.head_position', NEW.position::text, true);
    last_hash := decode(set_config('purchase_ledger.head_hash', encode(NEW.hash, 'hex'), true), 'hex');
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

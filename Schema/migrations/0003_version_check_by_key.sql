-- The insert trigger looked up the stream's current version (max(stream_version)) for every
-- row. That one query was a sixth of an append's server time (perf, BENCHMARKS.md), and it runs
-- under the append lock, where every microsecond is paid by every writer in turn. A caller who
-- names the version needs no lookup: versions are gapless per stream (this trigger guarantees
-- it), so version N+1 is right exactly when version N exists and N+1 does not. The unique key
-- (stream_id, stream_version) already refuses an existing N+1; only "N exists" is checked here,
-- and not at all for version 1. "Any version" (NULL) still reads the stream's head.
CREATE OR REPLACE FUNCTION events_before_insert() RETURNS trigger LANGUAGE plpgsql
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
    IF NEW.stream_version IS NULL THEN
        SELECT max(e.stream_version) INTO current_version FROM events e WHERE e.stream_id = NEW.stream_id;
        NEW.stream_version := coalesce(current_version, 0) + 1;
    ELSIF NEW.stream_version > 1 THEN
        PERFORM FROM events e WHERE e.stream_id = NEW.stream_id AND e.stream_version = NEW.stream_version - 1;
        IF NOT FOUND THEN
            SELECT max(e.stream_version) INTO current_version FROM events e WHERE e.stream_id = NEW.stream_id;
            RAISE EXCEPTION 'wrong expected version'
                USING ERRCODE = 'LE001',
                      DETAIL = format('stream is at version %s; the append expected %s',
                                      coalesce(current_version, 0), NEW.stream_version - 1);
        END IF;
    END IF;
    NEW.position := last_position + 1;
    NEW.recorded_at := now();
    NEW.previous_hash := last_hash;
    -- The bytes the hash covers, exactly as in 0001_events.sql (ChainRow.canonicalBytes in
    -- Swift rebuilds them for `purchase-ledger verify`).
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

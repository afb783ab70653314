-- Erasure's keys (docs/erasure.md). These tables may change, and the chain does not cover them:
-- erasing a person destroys their key here while every event stays as it was.

-- The ledger's own secrets: 'index', the key of the look-ups by user id and token. Stored as is,
-- or wrapped under LEDGER_KEY_ENCRYPTION_KEY (wrapped_by: that key's id).
CREATE TABLE ledger_keys (
    name       text        NOT NULL CHECK (name IN ('index')),
    key        bytea       NOT NULL,
    wrapped_by text,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT ledger_keys_pkey PRIMARY KEY (name)
);

-- A subject per person met from this release on. `lookup` is HMAC(index key, user id): the id
-- itself is never stored. Erasure sets `key` and `lookup` to NULL and `erased_at`: the subject's
-- sealed values can no longer be opened, and the same id later makes a new subject.
CREATE TABLE subjects (
    subject    text        NOT NULL CHECK (subject ~ '^s[a-z2-7]{26}$'),
    lookup     bytea       CHECK (octet_length(lookup) = 32),
    key        bytea,
    wrapped_by text,
    created_at timestamptz NOT NULL DEFAULT now(),
    erased_at  timestamptz,
    CONSTRAINT subjects_pkey PRIMARY KEY (subject),
    CONSTRAINT subjects_lookup_key UNIQUE (lookup),
    CONSTRAINT subjects_erased_hold_nothing CHECK (
        (erased_at IS NULL AND key IS NOT NULL AND lookup IS NOT NULL)
        OR (erased_at IS NOT NULL AND key IS NULL AND lookup IS NULL AND wrapped_by IS NULL))
);

-- The app account tokens issued to a subject, by HMAC(index key, token). Kept at erasure, pointing at
-- a subject with no key: Apple's later transactions naming such a token record erased:SUBJECT.
CREATE TABLE subject_tokens (
    lookup  bytea NOT NULL CHECK (octet_length(lookup) = 32),
    subject text  NOT NULL REFERENCES subjects (subject),
    CONSTRAINT subject_tokens_pkey PRIMARY KEY (lookup)
);
CREATE INDEX subject_tokens_by_subject ON subject_tokens (subject);

DO $$
BEGIN
    -- The index key is written once and never changed or removed by the application.
    GRANT SELECT, INSERT ON ledger_keys TO ledger_app;
    GRANT SELECT, INSERT, UPDATE, DELETE ON subjects, subject_tokens TO ledger_app;
    IF pg_has_role(current_user, 'ledger_owner', 'MEMBER') THEN
        ALTER TABLE ledger_keys OWNER TO ledger_owner;
        ALTER TABLE subjects OWNER TO ledger_owner;
        ALTER TABLE subject_tokens OWNER TO ledger_owner;
    END IF;
END $$;

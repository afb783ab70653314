import Postgres
import Primitives
import Sealing
import Synchronization

/// Subjects and their keys (migration 0033, docs/erasure.md): who a user id or an app account
/// token is, by keyed look-up, and the key that opens what was sealed for them. Outside the
/// chain, and the one place erasure changes anything.
public final class SubjectStore: Sendable {
    let pool: ConnectionPool
    let keyEncryptionKey: KeyEncryptionKey?
    /// The index key, read (or made) once: it never changes.
    private let index = Mutex<LookupKey?>(nil)

    public init(pool: ConnectionPool, keyEncryptionKey: KeyEncryptionKey?) {
        self.pool = pool
        self.keyEncryptionKey = keyEncryptionKey
    }

    /// The index key: made at first use (the first of several racing servers wins), wrapped
    /// under the key-encryption key when one is set.
    public func lookupKey() async throws -> LookupKey {
        if let key = index.withLock({ $0 }) { return key }
        let kek = keyEncryptionKey
        let key = try await pool.withConnection { connection in
            let fresh = LookupKey.random()
            let stored = kek?.wrap(fresh.bytes) ?? fresh.bytes
            try connection.execute("""
                INSERT INTO ledger_keys (name, key, wrapped_by) VALUES ('index', \(stored), \(kek?.id))
                ON CONFLICT (name) DO NOTHING
                """)
            let rows = try connection.query("SELECT key, wrapped_by FROM ledger_keys WHERE name = 'index'")
            guard let row = rows.first else { throw SubjectStoreError.damagedKey("index") }
            let bytes = try Self.unwrap(try row.decode(0), wrappedBy: try row.decode(1), kek: kek, owner: "index")
            guard let key = LookupKey(bytes: bytes) else { throw SubjectStoreError.damagedKey("index") }
            return key
        }
        index.withLock { $0 = key }
        return key
    }

    /// The subject `userId` is, with its key; with `creating`, a new subject when it is none
    /// (or its earlier one was erased). Nil when it is none and `creating` is false.
    public func subject(forUser userId: String, creating: Bool) async throws -> (subject: SubjectID, key: SubjectKey)? {
        let lookup = try await lookupKey().user(userId)
        let kek = keyEncryptionKey
        return try await pool.withConnection { connection in
            if let found = try Self.live(lookup: lookup, on: connection, kek: kek) { return found }
            guard creating else { return nil }
            let subject = SubjectID.random()
            let key = SubjectKey.random()
            // Two first writes of one id race here: the unique look-up keeps one subject, and
            // the loser reads the winner's.
            let inserted = try connection.execute("""
                INSERT INTO subjects (subject, lookup, key, wrapped_by)
                VALUES (\(subject.rawValue), \(lookup), \(kek?.wrap(key.bytes) ?? key.bytes), \(kek?.id))
                ON CONFLICT (lookup) DO NOTHING
                """)
            if inserted == 1 { return (subject, key) }
            return try Self.live(lookup: lookup, on: connection, kek: kek)
        }
    }

    /// The key of `subject`; nil once it is erased (or for a subject never made).
    public func key(of subject: SubjectID) async throws -> SubjectKey? {
        try await keys(of: [subject])[subject]
    }

    /// The keys of `subjects` still held, in one query: the erased and the unknown are absent.
    public func keys(of subjects: Set<SubjectID>) async throws -> [SubjectID: SubjectKey] {
        guard !subjects.isEmpty else { return [:] }
        let kek = keyEncryptionKey
        let names = PostgresArray(subjects.map { Optional.some($0.rawValue) })
        return try await pool.withConnection { connection in
            var keys: [SubjectID: SubjectKey] = [:]
            for row in try connection.query(.prepared("""
                SELECT subject, key, wrapped_by FROM subjects WHERE subject = ANY(\(names)::text[]) AND key IS NOT NULL
                """)) {
                guard let subject = SubjectID(try row.decode(0, as: String.self)) else { continue }
                keys[subject] = try Self.key(try row.decode(1), wrappedBy: try row.decode(2), kek: kek, owner: subject.rawValue)
            }
            return keys
        }
    }

    /// Records that `token` was issued to `subject`, so Apple's transactions naming it find them.
    public func bind(token: String, to subject: SubjectID) async throws {
        let statement = try await binding(token: token, to: subject)
        try await pool.withConnection { connection in _ = try connection.execute(statement) }
    }

    /// The statement `bind(token:to:)` runs, for a transaction of the caller's: an order's token
    /// is bound in the order's own append, at no round trip of its own.
    public func binding(token: String, to subject: SubjectID) async throws -> SQL {
        let lookup = try await lookupKey().token(token)
        return .prepared("""
            INSERT INTO subject_tokens (lookup, subject) VALUES (\(lookup), \(subject.rawValue))
            ON CONFLICT (lookup) DO NOTHING
            """)
    }

    /// The subjects `tokens` were issued to, in one query, each with its key, or nil for a
    /// subject since erased: a token of an erased person is still known as theirs, so Apple's
    /// later transactions naming it are recorded as `erased:SUBJECT`, never as the token.
    /// Tokens the ledger never issued to a subject are absent.
    public func subjects(forTokens tokens: Set<String>) async throws -> [String: (subject: SubjectID, key: SubjectKey?)] {
        guard !tokens.isEmpty else { return [:] }
        let index = try await lookupKey()
        let byLookup = Dictionary(tokens.map { (index.token($0), $0) }, uniquingKeysWith: { first, _ in first })
        let kek = keyEncryptionKey
        let lookups = PostgresArray(byLookup.keys.map { Optional.some(Hex.encode($0)) })
        return try await pool.withConnection { connection in
            var found: [String: (subject: SubjectID, key: SubjectKey?)] = [:]
            for row in try connection.query("""
                SELECT t.lookup, t.subject, s.key, s.wrapped_by FROM subject_tokens t JOIN subjects s USING (subject)
                WHERE t.lookup IN (SELECT decode(l, 'hex') FROM unnest(\(lookups)::text[]) AS l)
                """) {
                guard let token = byLookup[try row.decode(0, as: [UInt8].self)], let subject = SubjectID(try row.decode(1, as: String.self)) else { continue }
                let stored: [UInt8]? = try row.decode(2)
                found[token] = (subject, try stored.map { try Self.key($0, wrappedBy: try row.decode(3), kek: kek, owner: subject.rawValue) })
            }
            return found
        }
    }

    /// Destroys `subject`'s key and its look-up by user id, in one transaction. Its tokens'
    /// look-ups stay, pointing at a subject with no key (`subjects(forTokens:)`).
    /// True when this call erased it; false when it was erased already or never made.
    public func erase(_ subject: SubjectID) async throws -> Bool {
        try await pool.withConnection { connection in
            try connection.execute("""
                UPDATE subjects SET key = NULL, lookup = NULL, wrapped_by = NULL, erased_at = now()
                WHERE subject = \(subject.rawValue) AND erased_at IS NULL
                """) == 1
        }
    }

    private static func live(lookup: [UInt8], on connection: Connection, kek: KeyEncryptionKey?) throws -> (subject: SubjectID, key: SubjectKey)? {
        // Once per request that names a person: parsed and planned once per connection.
        guard let row = try connection.query(.prepared("SELECT subject, key, wrapped_by FROM subjects WHERE lookup = \(lookup)")).first,
              let subject = SubjectID(try row.decode(0, as: String.self))
        else { return nil }
        return (subject, try key(try row.decode(1), wrappedBy: try row.decode(2), kek: kek, owner: subject.rawValue))
    }

    private static func key(_ stored: [UInt8], wrappedBy: String?, kek: KeyEncryptionKey?, owner: String) throws -> SubjectKey {
        guard let key = SubjectKey(bytes: try unwrap(stored, wrappedBy: wrappedBy, kek: kek, owner: owner)) else {
            throw SubjectStoreError.damagedKey(owner)
        }
        return key
    }

    /// A key as stored: as is when `wrappedBy` is nil (made before a key-encryption key was
    /// set), else opened with the key-encryption key it names, which must be the one given.
    private static func unwrap(_ stored: [UInt8], wrappedBy: String?, kek: KeyEncryptionKey?, owner: String) throws -> [UInt8] {
        guard let wrappedBy else { return stored }
        guard let kek else { throw SubjectStoreError.keyEncryptionKeyMissing(wrappedBy: wrappedBy) }
        guard kek.id == wrappedBy else { throw SubjectStoreError.keyEncryptionKeyMismatch(wrappedBy: wrappedBy, given: kek.id) }
        do {
            return try kek.unwrap(stored)
        } catch {
            throw SubjectStoreError.damagedKey(owner)
        }
    }
}

/// Why a subject's key (or the index key) cannot be read.
public enum SubjectStoreError: Error, Equatable, CustomStringConvertible {
    /// Keys are wrapped, and no `LEDGER_KEY_ENCRYPTION_KEY` is set.
    case keyEncryptionKeyMissing(wrappedBy: String)
    /// Keys are wrapped under another key than the one set.
    case keyEncryptionKeyMismatch(wrappedBy: String, given: String)
    /// A stored key does not open or is not 32 bytes.
    case damagedKey(String)

    public var description: String {
        switch self {
        case .keyEncryptionKeyMissing(let id):
            "the subjects' keys are wrapped under the key-encryption key \(id), and LEDGER_KEY_ENCRYPTION_KEY is not set"
        case .keyEncryptionKeyMismatch(let id, let given):
            "the subjects' keys are wrapped under the key-encryption key \(id); LEDGER_KEY_ENCRYPTION_KEY holds \(given)"
        case .damagedKey(let owner):
            "the stored key of \(owner) cannot be opened"

        }
    }
}

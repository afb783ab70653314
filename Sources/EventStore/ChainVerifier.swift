import Crypto
import Postgres

/// Recomputes the hash chain from the stored columns, in Swift, independently of the SQL that
/// wrote it: each event's hash must be sha256(previous hash ‖ canonical bytes), each
/// previous hash the hash before it, and positions must run 1, 2, 3 ... without a gap.
public struct ChainVerifier: Sendable {
    /// What `verify` found.
    public enum Outcome: Sendable, Hashable {
        /// Every event matches; `head` is the last event's hash (32 zero bytes for an empty log).
        case verified(events: Int64, head: [UInt8])
        /// The first event that does not match, and why.
        case broken(position: Int64, reason: String)
    }

    public static let genesisHash = [UInt8](repeating: 0, count: 32)

    let pool: ConnectionPool
    let pageSize: Int

    public init(pool: ConnectionPool, pageSize: Int = 5_000) {
        self.pool = pool
        self.pageSize = pageSize
    }

    /// Walks the whole log; `progress` is called after each page with (checked, total).
    public func verify(progress: (@Sendable (Int64, Int64) -> Void)? = nil) async throws -> Outcome {
        let total: Int64 = try await pool.withConnection { connection in
            try connection.query("SELECT coalesce(max(position), 0) FROM events")[0].decode(0)
        }
        var expectedPosition: Int64 = 1
        var previous = Self.genesisHash
        while true {
            let page = try await fetch(after: expectedPosition - 1)
            if page.isEmpty { break }
            for row in page {
                if let reason = Self.check(row, expectedPosition: expectedPosition, previous: previous) {
                    return .broken(position: row.position, reason: reason)
                }
                previous = row.hash
                expectedPosition += 1
            }
            progress?(expectedPosition - 1, total)
        }
        return .verified(events: expectedPosition - 1, head: previous)
    }

    /// Checks the next page of events after `position`, whose predecessor's hash is `previous`:
    /// the incremental form of `verify()`, for a verifier that keeps a checkpoint. Returns
    /// where the sound part now ends (unchanged when nothing follows), or the first break.
    public func extend(after position: Int64, previous: [UInt8]) async throws -> Outcome {
        var reached = position
        var hash = previous
        for row in try await fetch(after: position) {
            if let reason = Self.check(row, expectedPosition: reached + 1, previous: hash) {
                return .broken(position: row.position, reason: reason)
            }
            reached = row.position
            hash = row.hash
        }
        return .verified(events: reached, head: hash)
    }

    /// The columns `rowMatches` reads, for a query over `events e`: every field as PostgreSQL's
    /// text (as the insert trigger hashed it), the links, and the predecessor's stored hash.
    public static let canonicalColumns: SQL = """
        e.position::text, e.stream_id, e.stream_version::text, e.event_id::text, e.event_type, e.schema_version::text,
        e.payload::text, e.metadata::text, e.idempotency_key, ((extract(epoch FROM e.recorded_at) * 1000000)::bigint)::text,
        e.previous_hash, e.hash, (SELECT p.hash FROM events p WHERE p.position = e.position - 1)
        """

    /// Whether the event in `row` (the `canonicalColumns` from column `first`, its position in
    /// column `position`) still hashes to its stored hash and names its predecessor's: cheap
    /// evidence for a few rows; the chain from the first event is what `verify()` and an
    /// incremental checkpoint vouch for.
    public static func rowMatches(_ row: PostgresRow, position: Int, first: Int) throws -> Bool {
        let chained = ChainRow(
            position: try row.decode(position), canonicalBytes: ChainRow.canonicalBytes(of: row, from: first),
            previousHash: try row.decode(first + 10), hash: try row.decode(first + 11))
        let predecessor = try row.decode(first + 12, as: [UInt8]?.self) ?? (chained.position == 1 ? genesisHash : [])
        return check(chained, expectedPosition: chained.position, previous: predecessor) == nil
    }

    /// Why `row` breaks the chain, or nil when it is sound.
    static func check(_ row: ChainRow, expectedPosition: Int64, previous: [UInt8]) -> String? {
        if row.position != expectedPosition {
            return "position \(expectedPosition) is missing: the next event is at \(row.position)"
        }
        if row.previousHash != previous {
            return "its previous hash is not the hash of the event before it"
        }
        var hasher = SHA256()
        hasher.update(data: previous)
        hasher.update(data: row.canonicalBytes)
        if Array(hasher.finalize()) != row.hash {
            return "its content does not match its hash"
        }
        return nil
    }

    private func fetch(after position: Int64) async throws -> [ChainRow] {
        let limit = Int64(pageSize)
        return try await pool.withConnection { connection in
            // Every field as PostgreSQL's text, exactly as the insert trigger hashed it.
            try connection.query(.prepared("""
                SELECT position, position::text AS position_text, stream_id, stream_version::text, event_id::text, event_type,
                       schema_version::text, payload::text, metadata::text, idempotency_key,
                       ((extract(epoch FROM recorded_at) * 1000000)::bigint)::text, previous_hash, hash
                FROM events WHERE position > \(position) ORDER BY position LIMIT \(limit)
                """)).map { row in
                ChainRow(
                    position: try row.decode(0), canonicalBytes: ChainRow.canonicalBytes(of: row, from: 1),
                    previousHash: try row.decode(11), hash: try row.decode(12))
            }
        }
    }
}

/// One event as the chain sees it.
struct ChainRow: Sendable {
    var position: Int64
    var canonicalBytes: [UInt8]
    var previousHash: [UInt8]
    var hash: [UInt8]

    /// The ten fields from column `first` of `row`, each as "<UTF-8 length>:<text>", or "~" for
    /// NULL, concatenated: the encoding of the insert trigger, events_before_insert() in
    /// Schema/migrations/0001_events.sql. Straight from the cells' bytes (PostgreSQL's text), not
    /// through a `String` per field: a long timeline checks hundreds of rows, and that was most
    /// of the check's time.
    static func canonicalBytes(of row: PostgresRow, from first: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        for column in first..<first + 10 {
            guard let field = row[column].bytes else {
                bytes.append(UInt8(ascii: "~"))
                continue
            }
            bytes.append(contentsOf: String(field.count).utf8)
            bytes.append(UInt8(ascii: ":"))
            bytes.append(contentsOf: field)
        }
        return bytes
    }
}

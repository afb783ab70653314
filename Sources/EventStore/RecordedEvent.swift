import Foundation
import Postgres

/// An event as the log holds it. Immutable: the log never changes or deletes one.
public struct RecordedEvent: Sendable, Hashable {
    /// Global position, gapless from 1, in commit order.
    public var position: Int64
    public var streamID: String
    /// Position within the stream, gapless from 1.
    public var streamVersion: Int64
    public var id: UUID
    public var type: String
    public var schemaVersion: Int32
    /// The payload as PostgreSQL normalised it (jsonb text form), after any upcasting.
    public var payload: JSONB
    public var metadata: JSONB
    public var idempotencyKey: String?
    /// When the appending transaction started, microseconds since 1970 UTC.
    public var recordedAt: PostgresTimestamp
    /// sha256 of the previous event's hash followed by this event's canonical bytes (32 bytes).
    public var hash: [UInt8]
    public var previousHash: [UInt8]
}

extension RecordedEvent {
    /// The column list every read selects, in the order `init(row:from:)` decodes them;
    /// `alias` qualifies the columns (e.g. "e.") when the query joins.
    public static func columnList(alias: String = "") -> String {
        let a = alias
        return """
            \(a)position, \(a)stream_id, \(a)stream_version, \(a)event_id, \(a)event_type, \(a)schema_version,
            \(a)payload, \(a)metadata, \(a)idempotency_key, \(a)recorded_at, \(a)previous_hash, \(a)hash
            """
    }

    /// Decodes the columns of `columnList` starting at column `first`.
    init(row: PostgresRow, from first: Int = 0) throws {
        self.init(
            position: try row.decode(first),
            streamID: try row.decode(first + 1),
            streamVersion: try row.decode(first + 2),
            id: try row.decode(first + 3),
            type: try row.decode(first + 4),
            schemaVersion: try row.decode(first + 5),
            payload: try row.decode(first + 6),
            metadata: try row.decode(first + 7),
            idempotencyKey: try row.decode(first + 8),
            recordedAt: try row.decode(first + 9),
            hash: try row.decode(first + 11),
            previousHash: try row.decode(first + 10))
    }
}

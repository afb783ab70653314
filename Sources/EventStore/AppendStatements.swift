import Foundation
import Postgres

/// The SQL of appends. Every batch is one INSERT over unnest()ed arrays: the statement text
/// never changes, and the insert trigger (Schema/migrations/0001_events.sql) draws positions,
/// checks expected versions and extends the hash chain under the append lock.
enum AppendStatements {
    /// One row per event, in append order.
    struct Rows {
        var streamIDs: [String?] = []
        var versions: [Int64?] = []
        var ids: [UUID?] = []
        var types: [String?] = []
        var schemaVersions: [Int32?] = []
        var payloads: [JSONB?] = []
        var metadata: [JSONB?] = []
        var idempotencyKeys: [String?] = []

        init(_ appends: [StreamAppend]) {
            for append in appends {
                var next = append.expectedVersion.firstVersion
                for event in append.events {
                    streamIDs.append(append.streamID)
                    versions.append(next)
                    next = next.map { $0 + 1 }
                    ids.append(event.id)
                    types.append(event.type)
                    schemaVersions.append(event.schemaVersion)
                    payloads.append(event.payload)
                    metadata.append(event.metadata)
                    idempotencyKeys.append(event.idempotencyKey)
                }
            }
        }
    }

    /// Prepared: its text never changes, so each writer connection parses and plans it once.
    static func insert(_ rows: Rows) -> SQL {
        .prepared("""
        INSERT INTO events (stream_id, stream_version, event_id, event_type, schema_version, payload,
                            metadata, idempotency_key)
        SELECT s, v, i, t, sv, p, m, k
        FROM unnest(\(PostgresArray(rows.streamIDs))::text[], \(PostgresArray(rows.versions))::bigint[],
                    \(PostgresArray(rows.ids))::uuid[], \(PostgresArray(rows.types))::text[],
                    \(PostgresArray(rows.schemaVersions))::int[], \(PostgresArray(rows.payloads))::jsonb[],
                    \(PostgresArray(rows.metadata))::jsonb[], \(PostgresArray(rows.idempotencyKeys))::text[])
             WITH ORDINALITY AS n(s, v, i, t, sv, p, m, k, ord)
        ORDER BY ord
        RETURNING \(unsafeRaw: RecordedEvent.columnList())
        """)
    }

    /// The events already in the log under any of these ids or idempotency keys, each with
    /// whether it is the same fact as the candidate it matched (stream, type, schema version
    /// and payload compared by PostgreSQL as jsonb, so key order and spacing do not matter).
    static func existing(_ rows: Rows) -> SQL {
        """
        SELECT c.ord, (e.stream_id = c.s AND e.event_type = c.t AND e.schema_version = c.sv
                       AND e.payload = c.p) AS same, \(unsafeRaw: RecordedEvent.columnList(alias: "e."))
        FROM unnest(\(PostgresArray(rows.streamIDs))::text[], \(PostgresArray(rows.ids))::uuid[],
                    \(PostgresArray(rows.types))::text[], \(PostgresArray(rows.schemaVersions))::int[],
                    \(PostgresArray(rows.payloads))::jsonb[], \(PostgresArray(rows.idempotencyKeys))::text[])
             WITH ORDINALITY AS c(s, i, t, sv, p, k, ord)
        JOIN events e ON e.event_id = c.i OR e.idempotency_key = c.k
        ORDER BY c.ord
        """
    }
}

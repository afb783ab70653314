import Foundation
import Postgres

extension EventStore {
    /// Appends through `COPY … FROM STDIN` on `connection`, inside the caller's transaction: the
    /// bulk path for imports. The insert triggers run as for any insert (append lock, positions,
    /// expected versions, hash chain), so the log cannot tell a copied event from another; a
    /// stream that is not at its expected version fails the whole COPY (the caller's transaction
    /// rolls back). Returns the number of events copied.
    public func copyAppend(_ appends: [StreamAppend], on connection: Connection) throws -> Int {
        let rows = AppendStatements.Rows(appends)
        guard !rows.streamIDs.isEmpty else { return 0 }
        return try connection.copyIn("""
            COPY events (stream_id, stream_version, event_id, event_type, schema_version, payload, metadata, idempotency_key) FROM STDIN
            """) { writer in
            for index in rows.streamIDs.indices {
                try writer.writeRow([
                    rows.streamIDs[index], rows.versions[index].map(String.init), rows.ids[index]?.uuidString.lowercased(), rows.types[index],
                    rows.schemaVersions[index].map(String.init), rows.payloads[index].map { String(decoding: $0.bytes, as: UTF8.self) },
                    rows.metadata[index].map { String(decoding: $0.bytes, as: UTF8.self) }, rows.idempotencyKeys[index],
                ])
            }
        }
    }
}

import Postgres

extension EventStore {
    /// The events of one stream from `version` on (1-based), in order, upcast.
    public func read(stream streamID: String, from version: Int64 = 1, limit: Int = 1_000) async throws -> [RecordedEvent] {
        let upcasters = self.upcasters
        return try await pool.withConnection { connection in
            try connection.query("""
                SELECT \(unsafeRaw: RecordedEvent.columnList()) FROM events
                WHERE stream_id = \(streamID) AND stream_version >= \(version)
                ORDER BY stream_version LIMIT \(Int64(limit))
                """, resultFormat: .binary).map { try upcasters.apply(to: RecordedEvent(row: $0)) }
        }
    }

    /// Up to `limit` events after `position`, in position order, which is commit order: every
    /// event below the last one returned has committed, so a reader can move its checkpoint to
    /// that position and never miss one (the append lock guarantees it; see the schema).
    public func events(after position: Int64, limit: Int = 1_000) async throws -> [RecordedEvent] {
        try await pool.withConnection { connection in try self.events(after: position, limit: limit, on: connection) }
    }

    /// `events(after:limit:)` on a connection the caller holds (inside its transaction).
    public func events(after position: Int64, limit: Int, on connection: Connection) throws -> [RecordedEvent] {
        try recordedEvents(connection.query(eventsStatement(after: position, limit: limit), resultFormat: .binary))
    }

    /// The statement `events(after:limit:)` runs, for a caller sending it in a pipeline with
    /// others; its rows (fetched in binary) become events by ``recordedEvents(_:)``.
    public func eventsStatement(after position: Int64, limit: Int) -> SQL {
        .prepared("""
            SELECT \(unsafeRaw: RecordedEvent.columnList()) FROM events
            WHERE position > \(position) ORDER BY position LIMIT \(Int64(limit))
            """)
    }

    /// The events of rows fetched in binary by ``eventsStatement(after:limit:)``, upcast.
    public func recordedEvents(_ rows: PostgresRows) throws -> [RecordedEvent] {
        try rows.map { try upcasters.apply(to: RecordedEvent(row: $0)) }
    }

    /// The position of the last committed event, 0 for an empty log.
    public func headPosition() async throws -> Int64 {
        try await pool.withConnection { connection in
            try connection.query("SELECT coalesce(max(position), 0) FROM events")[0].decode(0)
        }
    }

    /// Where the subscriber `name` has got to; 0 when it has never saved a checkpoint.
    public func checkpoint(named name: String) async throws -> Int64 {
        try await pool.withConnection { connection in
            let rows = try connection.query("SELECT position FROM subscription_checkpoints WHERE name = \(name)")
            return try rows.first?.decode(0) ?? 0
        }
    }

    /// Records that the subscriber `name` has applied every event up to `position`.
    public func saveCheckpoint(_ position: Int64, named name: String) async throws {
        _ = try await pool.withConnection { connection in
            try connection.execute("""
                INSERT INTO subscription_checkpoints (name, position) VALUES (\(name), \(position))
                ON CONFLICT (name) DO UPDATE SET position = excluded.position, updated_at = now()
                """)
        }
    }
}

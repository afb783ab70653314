import Postgres

/// How big the log is: events of a type, and the size of its two tables. The benches size a
/// grown log and count what a run recorded by these rather than by SQL of their own, so that
/// every statement on `events` and `documents` is read here, beside their indexes.
extension LedgerReads {
    /// One of the log's tables on disk.
    public struct TableSize: Sendable, Equatable {
        /// `events` or `documents`.
        public var table: String
        public var rows: Int64
        /// The heap (with TOAST), in bytes.
        public var heapBytes: Int64
        /// Every index of the table, in bytes.
        public var indexBytes: Int64
    }

    /// How many events of `type` the log holds (`OrderCreated`: a grown log's purchases).
    public func eventCount(ofType type: String) async throws -> Int64 {
        try await pool.withConnection { connection in
            try connection.query("SELECT count(*) FROM events WHERE event_type = \(type)")[0].decode(0)
        }
    }

    /// `events` and `documents`, in that order: their rows, heap and indexes.
    public func logTableSizes() async throws -> [TableSize] {
        try await pool.withConnection { connection in
            try ["events", "documents"].map { table in
                let row = try connection.query("""
                    SELECT pg_table_size(\(table)::regclass), pg_indexes_size(\(table)::regclass), (SELECT count(*) FROM \(identifier: table))
                    """)[0]
                return TableSize(table: table, rows: try row.decode(2), heapBytes: try row.decode(0), indexBytes: try row.decode(1))
            }
        }
    }
}

import Postgres

/// What the benches measure the log's own paths against, with PostgreSQL alone: the whole log
/// copied out, and a table of the log's shape without its triggers to copy rows into. They live
/// here, not in the benches, because only the log's module writes SQL on `events`
/// (docs/architecture.md §2; the architecture test holds it): a change to the table's shape is
/// then read beside the ceilings measured on it.
extension EventStore {
    /// `COPY` of every event, all columns, in position order, to the client, rows discarded:
    /// the ceiling read-all and a rebuild are measured against. Returns the rows copied.
    public static func copyOutWholeLog(on connection: Connection) throws -> Int {
        try connection.copyOut("COPY (SELECT * FROM events ORDER BY position) TO STDOUT") { _ in }
    }

    /// Makes `table` afresh (dropped first if it exists) with the log's columns, defaults,
    /// constraints and indexes but none of its triggers (no append lock, positions or chain):
    /// the ceiling the append path is measured against is COPY into it.
    public static func createUntriggeredShape(named table: String, on connection: Connection) throws {
        try connection.execute("DROP TABLE IF EXISTS \(identifier: table)")
        try connection.execute("CREATE TABLE \(identifier: table) (LIKE events INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES)")
    }
}

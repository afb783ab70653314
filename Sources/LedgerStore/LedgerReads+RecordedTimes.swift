import Postgres

extension LedgerReads {
    /// When the events at `positions` were recorded, in milliseconds since 1970 by the
    /// database's clock (`recorded_at`), keyed by position; a position the log does not hold is
    /// left out. A webhook message's time is its ledger event's: the oldest waiting message's
    /// age in `WebhookStatus`, a delivery's lag from commit in the webhook bench.
    public static func recordedAtMs(of positions: [Int64], on connection: Connection) throws -> [Int64: Int64] {
        guard !positions.isEmpty else { return [:] }
        var times: [Int64: Int64] = [:]
        for row in try connection.query("""
            SELECT position, (extract(epoch FROM recorded_at) * 1000)::bigint FROM events
            WHERE position = ANY(\(PostgresArray(positions.map { Optional($0) })))
            """) {
            times[try row.decode(0)] = try row.decode(1)
        }
        return times
    }
}

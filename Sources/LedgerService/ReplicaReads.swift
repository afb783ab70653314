import Logging
import Postgres
import Synchronization

/// Reads served by standbys (`DATABASE_READ_URL`) without losing read-your-writes: a read goes
/// to a standby only once it has replayed the primary's WAL up to a position taken after the
/// projections applied the caller's writes. A standby that lags past `lagLimit`, or cannot be
/// reached, leaves the read to the primary: slower, never stale.
public final class ReplicaReads: Sendable {
    let connections: ConnectionPool
    let lagLimit: Duration
    let logger: Logger
    private let counts = Mutex<(replica: Int, primary: Int)>((0, 0))

    public init(pool: ConnectionPool, lagLimit: Duration = .seconds(2), logger: Logger) {
        self.connections = pool
        self.lagLimit = lagLimit
        self.logger = logger
    }

    /// Reads served by a standby, and by the primary instead (lag or a standby down), so far.
    public var served: (replica: Int, primary: Int) { counts.withLock { $0 } }

    public func close() async { await connections.close() }

    /// The primary's current WAL insert position, as text (`0/16B3748`). The insert position,
    /// not the write position: the projections commit without waiting for their WAL flush
    /// (`SQL.commitWithoutWaitingForFlush`), so their commit record may not be written yet when
    /// the read begins, and a standby caught up with the write position could still lack it.
    static func currentLSN(on primary: ConnectionPool) async throws -> String {
        try await primary.withConnection { try $0.query("SELECT pg_current_wal_insert_lsn()::text")[0].decode(0) }
    }

    /// The standby pool once it has replayed `lsn`, else `primary`.
    func pool(after lsn: String, primary: ConnectionPool) async throws -> ConnectionPool {
        let deadline = ContinuousClock.now + lagLimit
        while true {
            let caughtUp: Bool
            do {
                // A standby promoted since (DATABASE_READ_URL with prefer-standby found no
                // standby) is a primary: it holds every commit, so it is up to date.
                caughtUp = try await connections.withConnection { connection in
                    try connection.query("""
                        SELECT CASE WHEN pg_is_in_recovery() THEN coalesce(pg_last_wal_replay_lsn() >= \(lsn)::pg_lsn, false) ELSE true END
                        """)[0].decode(0)
                }
            } catch {
                logger.warning("the read replica cannot be asked; reading from the primary", metadata: ["error": "\(type(of: error))"])
                counts.withLock { $0.primary += 1 }
                return primary
            }
            if caughtUp {
                counts.withLock { $0.replica += 1 }
                return connections
            }
            guard ContinuousClock.now < deadline else {
                logger.notice("the read replica lags behind the caller's writes; reading from the primary", metadata: ["lsn": "\(lsn)"])
                counts.withLock { $0.primary += 1 }
                return primary
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }
}

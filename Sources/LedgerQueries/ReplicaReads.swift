#if canImport(Glibc)
import Glibc
#endif
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

    /// What a standby must have replayed before it serves a read.
    enum Requirement: Sendable {
        /// The primary's WAL up to this position (`0/16B3748`): a read of the head.
        case lsn(String)
        /// The commit that brought every named projection's checkpoint to this log position:
        /// checkpoints and rows commit together, so the standby's own checkpoints say it.
        case projections(Int64, names: [String])
        /// Nothing: the standby as it is.
        case nothing

        /// True when the server of `connection` may serve the read. A standby promoted since
        /// (DATABASE_READ_URL with prefer-standby found no standby) is a primary: it holds
        /// every commit, so it is up to date.
        func isMet(on connection: Connection) throws -> Bool {
            switch self {
            case .lsn(let lsn):
                return try connection.query("""
                    SELECT CASE WHEN pg_is_in_recovery() THEN coalesce(pg_last_wal_replay_lsn() >= \(lsn)::pg_lsn, false) ELSE true END
                    """)[0].decode(0)
            case .projections(let position, let names):
                return try connection.query("""
                    SELECT count(*) = \(Int64(names.count)) AND coalesce(min(position), 0) >= \(position)
                    FROM projection_checkpoints WHERE name = ANY(\(PostgresArray(names.map(Optional.some))))
                    """)[0].decode(0)
            case .nothing:
                return true
            }
        }
    }

    /// Runs `body` on a standby's connection once that very connection's server meets
    /// `requirement`, else on the primary. The replay is checked on the connection that then
    /// serves the read: with several standbys behind `DATABASE_READ_URL`, a check on one pooled
    /// connection and a read on another could land on two servers, one not yet caught up.
    ///
    /// A standby has no notification of its replay (NOTIFY is not replayed to it), so a lagging
    /// one is asked again on that same connection, on the connection's own thread (never
    /// Swift's cooperative pool), after 0.1 ms doubling to 2 ms, until `lagLimit`.
    func withConnection<T: Sendable>(
        after requirement: Requirement, primary: ConnectionPool, _ body: @escaping @Sendable (Connection) throws -> T
    ) async throws -> T {
        let lagLimit = lagLimit
        let outcome: Outcome<T>
        do {
            outcome = try await connections.withConnection { connection -> Outcome<T> in
                let deadline = ContinuousClock.now + lagLimit
                var pause: UInt32 = 100
                while !(try requirement.isMet(on: connection)) {
                    guard ContinuousClock.now < deadline else { return .lagging }
                    usleep(pause)
                    pause = min(pause * 2, 2_000)
                }
                return .served(Result { try body(connection) })
            }
        } catch {
            logger.warning("the read replica cannot be asked; reading from the primary", metadata: ["error": "\(type(of: error))"])
            counts.withLock { $0.primary += 1 }
            return try await primary.withConnection(body)
        }
        switch outcome {
        case .served(let result):
            counts.withLock { $0.replica += 1 }
            return try result.get()
        case .lagging:
            logger.notice("the read replica lags behind the caller's writes; reading from the primary", metadata: ["requirement": "\(requirement)"])
            counts.withLock { $0.primary += 1 }
            return try await primary.withConnection(body)
        }
    }

    private enum Outcome<T: Sendable>: Sendable {
        case served(Result<T, any Error>)
        case lagging
    }
}

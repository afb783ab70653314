import Logging
import Postgres
import Synchronization

/// Waits for "events were appended" on a connection of its own (LISTEN), so tailing readers
/// wake at once instead of polling; when the wait times out they read anyway, so a lost
/// notification (a reconnect, a restart) only delays them by the poll interval.
public final class AppendListener: Sendable {
    private let pool: ConnectionPool
    /// The connection that last ran LISTEN: a reconnected pool hands out a new one, which must
    /// LISTEN again before it can be woken.
    private let listening = Mutex<ObjectIdentifier?>(nil)

    public init(conninfo: String, logger: Logger) {
        // One connection, used only for waiting: a wait blocks its thread for up to the poll
        // interval and must not hold a connection of the shared pool.
        self.pool = ConnectionPool(conninfo: conninfo, maxConnections: 1, logger: logger)
    }

    /// Starts listening if this connection is not yet; returns at once. Call it before reading,
    /// so an append that commits between the read and the wait still wakes the wait.
    public func prepare() async throws {
        try await pool.withConnection { connection in
            try self.ensureListening(connection)
        }
    }

    /// Returns when an append commits or `timeout` passes, whichever is first.
    public func wait(timeout: Duration) async throws {
        try await pool.withConnection { connection in
            try self.ensureListening(connection)
            _ = try connection.waitForNotifications(timeout: timeout)
        }
    }

    public func close() async {
        await pool.close()
    }

    private func ensureListening(_ connection: Connection) throws {
        let id = ObjectIdentifier(connection)
        guard listening.withLock({ $0 }) != id else { return }
        let schema: String = try connection.query("SELECT current_schema()")[0].decode(0)
        try connection.listen(schema + ".events")
        listening.withLock { $0 = id }
    }
}

import Foundation
import Logging
import Postgres
import Synchronization
import TestSupport

/// Counts how many bodies run at once and remembers the highest count.
final class ConcurrencyGauge: Sendable {
    private let state = Mutex((current: 0, peak: 0))

    func enter() { state.withLock { $0.current += 1; $0.peak = max($0.peak, $0.current) } }
    func leave() { state.withLock { $0.current -= 1 } }
    var peak: Int { state.withLock { $0.peak } }
}

struct ExpectedFailure: Error, Equatable {}

extension ConnectionPool {
    /// Runs one statement and decodes the first column of the first row.
    func scalar<T: PostgresDecodable & Sendable>(_ sql: SQL, as type: T.Type = T.self) async throws -> T? {
        try await withConnection { connection in try connection.query(sql).scalar(T.self) }
    }
}

/// The backend a body ran on, set from inside the body (which runs on the connection's thread).
final class BackendLatch: Sendable {
    private let state = Mutex<Int32?>(nil)

    func record(_ connection: Connection) { state.withLock { $0 = connection.backendPID } }
    var pid: Int32? { state.withLock { $0 } }
}

/// Waits until the body behind `latch` is inside `pg_sleep` on the server. Tests that cancel,
/// kill or restart "during a statement" act only then: a sleep of a few hundred milliseconds
/// is not enough on a busy CI machine, where connecting alone can take longer.
func waitUntilSleeping(_ latch: BackendLatch, conninfo: String, timeout: Duration = .seconds(60)) async throws {
    struct NeverSlept: Error {}
    let observer = ConnectionPool(conninfo: conninfo, maxConnections: 1, logger: TestDatabase.logger)
    defer { Task { await observer.close() } }
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if let pid = latch.pid {
            let sleeping = try await observer.withConnection { connection in
                try connection.query(
                    "SELECT count(*) FROM pg_stat_activity WHERE pid = \(pid) AND state = 'active' AND wait_event = 'PgSleep'"
                ).scalar(Int.self)
            }
            if sleeping == 1 { return }
        }
        try await Task.sleep(for: .milliseconds(20))
    }
    throw NeverSlept()
}

/// A task running `pg_sleep(seconds)` on a connection of `pool`, returned once the statement
/// runs on the server, with the latch naming its backend. No statement time-out: only a cancel
/// (or the connection's end) stops it early. `clientCheck` sets PostgreSQL's
/// `client_connection_check_interval`, so the backend notices a vanished client while it sleeps.
func sleepingStatement(
    on pool: ConnectionPool, seconds: Int, clientCheck: String? = nil
) async throws -> (task: Task<Void, any Error>, latch: BackendLatch) {
    let running = BackendLatch()
    let task = Task {
        try await pool.withConnection { connection in
            try connection.execute("SET statement_timeout = 0")
            if let clientCheck { try connection.execute("SELECT set_config('client_connection_check_interval', \(clientCheck), false)") }
            running.record(connection)
            try connection.execute("SELECT pg_sleep(\(seconds))")
        }
    }
    // Acted on while the statement runs on the server, not while the task waits to connect.
    try await waitUntilSleeping(running, conninfo: TestDatabase.adminConninfo)
    return (task, running)
}

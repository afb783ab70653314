import Dispatch
import Logging
import Synchronization

/// A bounded pool of connections whose work runs on threads of its own, never on Swift's
/// cooperative pool (libpq blocks).
///
/// Each slot owns a serial `DispatchQueue` and at most one ``Connection``; a body runs on its
/// slot's queue. At most `maxConnections` connections exist; further callers wait in FIFO order.
/// A connection found dead (before use, or after a connection-class error) is discarded and a
/// new one is opened on next use, so the pool survives a server restart: an in-flight query
/// may fail with `PostgresError.Code.connectionLost`, and the next call reconnects.
public final class ConnectionPool: Sendable {
    private struct Locked: ~Copyable {
        var state: PoolState<CheckedContinuation<Slot, any Error>>
        var slots: [Slot] = []
        var nextWaiterID: UInt64 = 0
    }

    private let conninfo: String
    private let logger: Logger
    private let locked: Mutex<Locked>
    /// How long a cancelled task's cancel request may take before the connection is closed instead.
    private let cancelDeadline: Duration

    /// A pool for `conninfo` (a conninfo string or `postgres://` URI). Connects lazily.
    public init(conninfo: String, maxConnections: Int = 8, cancelDeadline: Duration = .seconds(3), logger: Logger) {
        self.conninfo = conninfo
        self.logger = logger
        self.cancelDeadline = cancelDeadline
        self.locked = Mutex(Locked(state: PoolState(maxConnections: maxConnections)))
    }

    /// The pool's bound.
    public var maxConnections: Int { locked.withLock { $0.state.maxConnections } }

    /// How many connections are leased right now (for tests and metrics).
    public var leasedCount: Int { locked.withLock { $0.state.busyCount } }

    /// Callers waiting for a connection now (all are leased). For health gauges and for tests
    /// that must know a caller is queued before they go on.
    public var waitingCount: Int { locked.withLock { $0.state.waiterCount } }

    /// Runs `body` with a connection of the pool on that connection's own thread.
    ///
    /// When the body leaves a transaction open, it is rolled back before the connection is
    /// reused. Throws `poolClosed` after ``close()``, `CancellationError` when the task is
    /// cancelled while waiting for a connection. Cancelling the task while the body runs sends
    /// the server a cancel request: the running statement fails with `SQLState.queryCanceled`.
    @discardableResult
    public func withConnection<T: Sendable>(
        _ body: @escaping @Sendable (Connection) throws -> T
    ) async throws -> T {
        let slot = try await acquire()
        let cancellation = QueryCancellation(deadline: cancelDeadline, logger: logger)
        let result: Result<T, any Error>
        do {
            result = .success(try await withTaskCancellationHandler {
                try await slot.run(conninfo: conninfo, logger: logger, cancellation: cancellation, body)
            } onCancel: {
                cancellation.cancel()
            })
        } catch {
            result = .failure(error)
        }
        await release(slot)
        return try result.get()
    }

    /// Runs `body` in a transaction (see ``Connection/transaction(_:)``) on a pooled connection.
    @discardableResult
    public func withTransaction<T: Sendable>(
        _ body: @escaping @Sendable (Connection) throws -> T
    ) async throws -> T {
        try await withConnection { connection in try connection.transaction(body) }
    }

    /// Closes the pool: waiting callers and later calls get `poolClosed`; idle connections are
    /// finished now, leased ones when their body returns.
    public func close() async {
        let (waiters, slots) = locked.withLock { locked in
            let (waiters, idle) = locked.state.close()
            return (waiters, idle.map { locked.slots[$0] })
        }
        for waiter in waiters {
            waiter.resume(throwing: PostgresError(code: .poolClosed, message: "the connection pool is closed"))
        }
        for slot in slots { await slot.closeConnection() }
    }

    private func acquire() async throws -> Slot {
        let id = locked.withLock { locked in
            locked.nextWaiterID += 1
            return locked.nextWaiterID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Slot, any Error>) in
                enum Outcome { case slot(Slot), wait, closed, cancelled }
                let outcome: Outcome = locked.withLock { locked in
                    // Checked under the lock, so a cancellation either is seen here or finds the
                    // waiter queued in `onCancel`.
                    if Task.isCancelled { return .cancelled }
                    switch locked.state.acquire(id: id, waiter: continuation) {
                    case .use(let index): return .slot(locked.slots[index])
                    case .create(let index):
                        let slot = Slot(id: index)
                        locked.slots.append(slot)
                        return .slot(slot)
                    case .wait: return .wait
                    case .closed: return .closed
                    }
                }
                switch outcome {
                case .slot(let slot): continuation.resume(returning: slot)
                case .wait: break
                case .closed:
                    continuation.resume(throwing: PostgresError(code: .poolClosed, message: "the connection pool is closed"))
                case .cancelled: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            let waiter = locked.withLock { $0.state.cancel(id: id) }
            waiter?.resume(throwing: CancellationError())
        }
    }

    private func release(_ slot: Slot) async {
        let action = locked.withLock { $0.state.release(slot: slot.id) }
        switch action {
        case .handOver(let waiter): waiter.resume(returning: slot)
        case .idle: break
        case .close: await slot.closeConnection()
        }
    }
}

/// One lane of the pool: a serial queue and the connection that lives on it.
///
/// `@unchecked Sendable` is safe because `connection` is read and written only by blocks on
/// `queue`, a serial queue, and the pool leases a slot to one caller at a time.
final class Slot: @unchecked Sendable {
    let id: Int
    private let queue: DispatchQueue
    private var connection: Connection?

    init(id: Int) {
        self.id = id
        self.queue = DispatchQueue(label: "Postgres.ConnectionPool.slot-\(id)")
    }

    /// Runs `body` on this slot's queue with its connection, opening one if needed.
    func run<T: Sendable>(
        conninfo: String, logger: Logger, cancellation: QueryCancellation,
        _ body: @escaping @Sendable (Connection) throws -> T
    ) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result {
                    try self.runOnQueue(conninfo: conninfo, logger: logger, cancellation: cancellation, body)
                })
            }
        }
    }

    /// Closes this slot's connection (on its queue).
    func closeConnection() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async {
                self.connection?.close()
                self.connection = nil
                continuation.resume()
            }
        }
    }

    private func runOnQueue<T>(
        conninfo: String, logger: Logger, cancellation: QueryCancellation, _ body: (Connection) throws -> T
    ) throws -> T {
        if let existing = connection, !existing.isUsableAfterIdle() {
            logger.info("discarding a dead PostgreSQL connection", metadata: ["slot": "\(id)"])
            existing.close()
            connection = nil
        }
        let connection: Connection
        if let existing = self.connection {
            connection = existing
        } else {
            connection = try Connection.connect(conninfo, logger: logger)
            self.connection = connection
        }
        guard cancellation.start(connection) else { throw CancellationError() }
        let result = Result { try body(connection) }
        if cancellation.finish() {
            logger.notice("closing a PostgreSQL connection whose cancel request was not answered in time", metadata: ["slot": "\(id)"])
            connection.close()
            self.connection = nil
            return try result.get()
        }
        switch result {
        case .success(let value):
            tidy(connection, after: nil, logger: logger)
            return value
        case .failure(let error):
            tidy(connection, after: error, logger: logger)
            throw error
        }
    }

    /// After a body: drop a dead connection, roll back a transaction the body left open.
    private func tidy(_ connection: Connection, after error: (any Error)?, logger: Logger) {
        if !connection.isAlive || error?.isPostgresConnectionError == true {
            logger.info("discarding a PostgreSQL connection after a connection error", metadata: ["slot": "\(id)"])
            connection.close()
            self.connection = nil
            return
        }
        if connection.isInTransaction {
            do {
                try connection.execute("ROLLBACK")
            } catch {
                logger.warning("ROLLBACK of a transaction left open failed; discarding the connection", metadata: ["slot": "\(id)"])
                connection.close()
                self.connection = nil
            }
        }
    }
}

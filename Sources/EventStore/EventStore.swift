import Logging
import Postgres

/// The append-only event log in PostgreSQL (docs/architecture.md §3).
///
/// Appends are durable when they return, checked against an expected version and idempotent by
/// event id and idempotency key. Positions are gapless and in commit order, so a reader that
/// follows "all events after P" never skips one. Concurrent appends from this process share
/// commits (`GroupCommitter`).
public final class EventStore: Sendable {
    public let pool: ConnectionPool
    let upcasters: Upcasters
    let logger: Logger
    private let committer: GroupCommitter

    /// - Parameter maxBatchEvents: the most events one group commit takes.
    public init(pool: ConnectionPool, upcasters: Upcasters = Upcasters(), maxBatchEvents: Int = 2_000, logger: Logger) {
        self.pool = pool
        self.upcasters = upcasters
        self.logger = logger
        self.committer = GroupCommitter(pool: pool, maxBatchEvents: maxBatchEvents, logger: logger)
    }

    /// Batches committed so far by this store's group commit, and the commands in them.
    public var groupCommitStatistics: GroupCommitStatistics { committer.statistics }

    /// Appends `events` to one stream, in one transaction, in order.
    @discardableResult
    public func append(_ events: [NewEvent], to streamID: String, expecting expected: ExpectedVersion = .any) async throws -> [RecordedEvent] {
        try await append([StreamAppend(events, to: streamID, expecting: expected)])
    }

    /// Appends to several streams in one transaction: all commit, or none does.
    ///
    /// `alongside` are writes of the caller's own tables that must commit with these events
    /// (the evidence they cite): they run in the same transaction, before the events, so an
    /// event never commits without them, and a group-committed batch costs them no transaction
    /// of their own. They must not touch the log and must be idempotent (`ON CONFLICT DO
    /// NOTHING`): when a batch fails, each command runs again on its own.
    @discardableResult
    public func append(_ appends: [StreamAppend], alongside: [SQL] = []) async throws -> [RecordedEvent] {
        try await committer.append(appends, alongside: alongside)
    }

    /// Appends inside the caller's transaction on `connection`, so events commit together with
    /// the caller's other writes. No group commit here: the caller owns the commit.
    @discardableResult
    public static func append(_ appends: [StreamAppend], in connection: Connection) throws -> [RecordedEvent] {
        try Appender.appendCommand(appends, on: connection)
    }

    /// One command, after its `alongside` statements, in a transaction of its own; tried up to
    /// three times when a concurrent append of the same ids got in first, the connection
    /// dropped (a retry returns the original events) or the transaction hit a deadlock.
    static func appendAlone(_ command: [StreamAppend], alongside: [SQL] = [], pool: ConnectionPool) async throws -> [RecordedEvent] {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await pool.withTransaction { connection in
                    _ = try connection.pipeline(alongside)
                    return try Appender.appendCommand(command, on: connection)
                }
            } catch where attempt < 3 && Appender.isRetryable(error) {
                continue
            }
        }
    }
}

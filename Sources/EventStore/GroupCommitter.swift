import Logging
import Postgres
import Synchronization

/// Group commit in the process. The append lock makes commits one at a time (that is what
/// keeps position order equal to commit order), so a durable commit per command would cap the
/// log at one fsync per command. Instead, commands that arrive while a batch is committing wait
/// and go together in the next one: one INSERT, one commit, one fsync for all of them.
final class GroupCommitter: Sendable {
    private struct Pending {
        var command: [StreamAppend]
        var continuation: CheckedContinuation<[RecordedEvent], any Error>
        var eventCount: Int { command.reduce(0) { $0 + $1.events.count } }
    }

    private struct State {
        var queue: [Pending] = []
        var writing = false
        var statistics = GroupCommitStatistics()
    }

    /// How long (in scheduler turns) the writer waits for the last batch's callers to return.
    static let maxYieldsForReturningCallers = 8

    private let state = Mutex(State())
    private let pool: ConnectionPool
    private let maxBatchEvents: Int
    private let logger: Logger

    init(pool: ConnectionPool, maxBatchEvents: Int, logger: Logger) {
        self.pool = pool
        self.maxBatchEvents = max(1, maxBatchEvents)
        self.logger = logger
    }

    var statistics: GroupCommitStatistics { state.withLock { $0.statistics } }

    /// Appends one command durably; returns when its batch has committed.
    func append(_ command: [StreamAppend]) async throws -> [RecordedEvent] {
        try Appender.validate(command)
        return try await withCheckedThrowingContinuation { continuation in
            let startWriter = state.withLock { state in
                state.queue.append(Pending(command: command, continuation: continuation))
                guard !state.writing else { return false }
                state.writing = true
                return true
            }
            if startWriter {
                Task { await self.drain() }
            }
        }
    }

    /// Commits batches until no command is waiting; exactly one drain runs at a time.
    private func drain() async {
        var lastBatchSize = 0
        while true {
            // The callers just resumed usually append again at once. Without this wait the
            // first of them to return would commit alone while the rest queue behind it, and
            // batches would alternate between one command and all the others.
            var yields = 0
            while yields < Self.maxYieldsForReturningCallers, state.withLock({ $0.queue.count }) < lastBatchSize {
                await Task.yield()
                yields += 1
            }
            let batch = state.withLock { state -> [Pending] in
                var taken: [Pending] = []
                var events = 0
                while let next = state.queue.first, taken.isEmpty || events + next.eventCount <= maxBatchEvents {
                    events += next.eventCount
                    taken.append(state.queue.removeFirst())
                }
                if taken.isEmpty { state.writing = false }
                return taken
            }
            if batch.isEmpty { return }
            lastBatchSize = batch.count
            state.withLock {
                $0.statistics.batches += 1
                $0.statistics.commands += batch.count
            }
            let results = await commit(batch.map(\.command))
            for (pending, result) in zip(batch, results) {
                pending.continuation.resume(with: result)
            }
        }
    }

    private func commit(_ commands: [[StreamAppend]]) async -> [Result<[RecordedEvent], any Error>] {
        do {
            let inserted = try await pool.withConnection { connection in
                try Appender.insertBatch(commands, on: connection)
            }
            return inserted.map { .success($0) }
        } catch {
            // Something in the batch conflicted (or the connection dropped and we cannot tell
            // whether it committed): each command on its own finds out, idempotently.
            logger.debug("batch append fell back to one command at a time", metadata: ["commands": "\(commands.count)"])
            var results: [Result<[RecordedEvent], any Error>] = []
            for command in commands {
                do {
                    results.append(.success(try await EventStore.appendAlone(command, pool: pool)))
                } catch {
                    results.append(.failure(error))
                }
            }
            return results
        }
    }
}

/// How well group commit is batching: commands per batch is what each fsync is shared by.
public struct GroupCommitStatistics: Sendable, Hashable {
    public var batches = 0
    public var commands = 0
    public var commandsPerBatch: Double { batches == 0 ? 0 : Double(commands) / Double(batches) }
}

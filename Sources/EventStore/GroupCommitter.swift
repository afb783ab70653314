import Foundation
import Logging
import Postgres

/// Group commit in the process. The append lock makes commits one at a time (that is what
/// keeps position order equal to commit order), so a durable commit per command would cap the
/// log at one fsync per command. Instead, commands that arrive while a batch is committing wait
/// and go together in the next one: one INSERT, one commit, one fsync for all of them.
///
/// One writer at a time holds a pooled connection and loops on that connection's own thread:
/// take what is queued, commit it, resume its callers, wait for the next. Between batches it
/// never goes back through the pool or the cooperative pool: those hand-offs cost more than the
/// INSERT itself (docs/benchmarks.md, 'Why the code is shaped so').
final class GroupCommitter: Sendable {
    struct Pending {
        var command: [StreamAppend]
        /// The caller's statements that commit with the command (`EventStore.append`).
        var alongside: [SQL]
        var continuation: CheckedContinuation<[RecordedEvent], any Error>
        var eventCount: Int { command.reduce(0) { $0 + $1.events.count } }
    }

    /// What the writer knows between batches; guarded by `queue`'s condition.
    private final class Queue: @unchecked Sendable {
        let condition = NSCondition()
        var pending: [Pending] = []
        var writing = false
        var statistics = GroupCommitStatistics()
    }

    /// How long the writer waits for the callers of the batch it just committed to send their
    /// next command, when fewer than that batch's count are queued. Callers usually return in
    /// tens of microseconds; without this wait the first one back would commit alone while the
    /// rest queue behind it, and batches would alternate between one command and all the others.
    static let returningCallersWait: TimeInterval = 0.000_5
    /// How long the writer keeps its connection with nothing to do before giving it back: long
    /// enough to bridge a caller's pause between appends, short enough that the pool's other
    /// users hardly notice the lane it holds.
    static let idleWait: TimeInterval = 0.005

    private let queue = Queue()
    private let pool: ConnectionPool
    private let maxBatchEvents: Int
    private let logger: Logger

    init(pool: ConnectionPool, maxBatchEvents: Int, logger: Logger) {
        self.pool = pool
        self.maxBatchEvents = max(1, maxBatchEvents)
        self.logger = logger
    }

    var statistics: GroupCommitStatistics {
        queue.condition.lock()
        defer { queue.condition.unlock() }
        return queue.statistics
    }

    /// Appends one command durably; returns when its batch has committed.
    func append(_ command: [StreamAppend], alongside: [SQL] = []) async throws -> [RecordedEvent] {
        try Appender.validate(command)
        return try await withCheckedThrowingContinuation { continuation in
            queue.condition.lock()
            queue.pending.append(Pending(command: command, alongside: alongside, continuation: continuation))
            let startWriter = !queue.writing
            queue.writing = true
            queue.condition.signal()
            queue.condition.unlock()
            if startWriter {
                Task { await self.write() }
            }
        }
    }

    /// The writer: runs until nothing has been queued for `idleWait`. Exactly one runs at a time.
    private func write() async {
        while true {
            let failed: [Pending]
            do {
                failed = try await pool.withConnection { connection in self.commitLoop(on: connection) }
            } catch {
                // No connection (the server is down, or the pool closed): what is queued now
                // fails with that error; callers decide whether to retry.
                failed = []
                for pending in takeAll() { pending.continuation.resume(throwing: error) }
            }
            if !failed.isEmpty { await commitOneByOne(failed) }
            if stopIfIdle() { return }
        }
    }

    /// Commits batches on `connection` until idle. Returns a batch whose INSERT failed: it is
    /// sorted out one command at a time through the pool, and a dead connection is replaced.
    private func commitLoop(on connection: Connection) -> [Pending] {
        var lastBatchSize = 0
        while true {
            let batch = nextBatch(expecting: lastBatchSize)
            if batch.isEmpty { return [] }
            lastBatchSize = batch.count
            let results: [[RecordedEvent]]
            let started = ContinuousClock.now
            do {
                results = try Appender.insertBatch(batch.map(\.command), alongside: batch.flatMap(\.alongside), on: connection)
                let took = ContinuousClock.now - started
                queue.condition.lock()
                queue.statistics.committing += took
                queue.condition.unlock()
            } catch {
                // Something in the batch conflicted (or the connection dropped and we cannot tell
                // whether it committed): each command on its own finds out, idempotently.
                logger.debug("batch append fell back to one command at a time", metadata: ["commands": "\(batch.count)"])
                return batch
            }
            for (pending, events) in zip(batch, results) {
                pending.continuation.resume(returning: events)
            }
        }
    }

    /// Waits for work, then takes up to `maxBatchEvents` events' worth of commands (at least one).
    /// Empty after `idleWait` with nothing queued.
    private func nextBatch(expecting lastBatchSize: Int) -> [Pending] {
        queue.condition.lock()
        defer { queue.condition.unlock() }
        // NSCondition waits only until a Date, so these deadlines are wall-clock ones: a few
        // milliseconds of pacing, never a time recorded or decided by (the one exception to
        // "one clock" the architecture test allows, by name).
        let idleDeadline = Date(timeIntervalSinceNow: Self.idleWait)
        while queue.pending.isEmpty {
            if !queue.condition.wait(until: idleDeadline) && queue.pending.isEmpty { return [] }
        }
        let returningDeadline = Date(timeIntervalSinceNow: Self.returningCallersWait)
        while queue.pending.count < lastBatchSize, queue.condition.wait(until: returningDeadline) {}
        var taken: [Pending] = []
        var events = 0
        while let next = queue.pending.first, taken.isEmpty || events + next.eventCount <= maxBatchEvents {
            events += next.eventCount
            taken.append(queue.pending.removeFirst())
        }
        queue.statistics.batches += 1
        queue.statistics.commands += taken.count
        return taken
    }

    /// Ends the writer when nothing is queued; otherwise it goes on (a command may have arrived
    /// after the loop gave its connection back).
    private func stopIfIdle() -> Bool {
        queue.condition.lock()
        defer { queue.condition.unlock() }
        if queue.pending.isEmpty { queue.writing = false }
        return !queue.writing
    }

    private func takeAll() -> [Pending] {
        queue.condition.lock()
        defer { queue.condition.unlock() }
        let all = queue.pending
        queue.pending = []
        return all
    }

    private func commitOneByOne(_ batch: [Pending]) async {
        for pending in batch {
            do {
                pending.continuation.resume(returning: try await EventStore.appendAlone(pending.command, alongside: pending.alongside, pool: pool))
            } catch {
                pending.continuation.resume(throwing: error)
            }
        }
    }
}

/// How well group commit is batching: commands per batch is what each fsync is shared by.
public struct GroupCommitStatistics: Sendable, Hashable {
    public var batches = 0
    public var commands = 0
    /// Wall time spent inside batch INSERTs (statement and commit), summed over batches.
    public var committing: Duration = .zero
    public var commandsPerBatch: Double { batches == 0 ? 0 : Double(commands) / Double(batches) }
}

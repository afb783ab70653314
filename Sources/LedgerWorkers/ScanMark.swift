import LedgerStore
import Synchronization

/// How far a worker scanning the log for unfinished work knows everything before to be done:
/// kept in memory between its passes, and in `worker_checkpoints` for every server's next start
/// (`LedgerReads.WorkerMark`). Held in memory only, each start walked the whole past: at
/// 20,000,000 events the retry worker's first pass went through 3,050,000 submissions.
final class ScanMark: Sendable {
    let mark: LedgerReads.WorkerMark
    let reads: LedgerReads
    /// Nil until the first pass reads the shared mark.
    private let known = Mutex<Int64?>(nil)

    init(_ mark: LedgerReads.WorkerMark, reads: LedgerReads) {
        self.mark = mark
        self.reads = reads
    }

    /// Where a pass starts: this process's mark, or the servers' on its first pass.
    func start() async throws -> Int64 {
        if let known = known.withLock({ $0 }) { return known }
        let shared = try await reads.position(of: mark)
        return known.withLock { known in
            let start = max(known ?? 0, shared)
            known = start
            return start
        }
    }

    /// Everything at or before `position` is done, as this pass found; moves the mark forward
    /// (never back), and the servers' too when a pass that began at `start` got further.
    func reached(_ position: Int64, from start: Int64) async throws {
        known.withLock { $0 = max($0 ?? 0, position) }
        if position > start { try await reads.move(mark, to: position) }
    }

    /// The same for this process only: a pass cut short (Apple down) keeps what it learned,
    /// and the shared mark waits for a pass that reaches the end.
    func reachedHere(_ position: Int64) {
        known.withLock { $0 = max($0 ?? 0, position) }
    }
}

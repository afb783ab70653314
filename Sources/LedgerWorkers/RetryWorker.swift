import AppStore
import EventStore
import Foundation
import Ledger
import LedgerService
import LedgerStore
import Logging
import Postgres
import Synchronization

/// Finishes every accepted submission: asks Apple again about receipts it could not verify,
/// with backoff, until it answers, and decides submissions nobody decided (the process died
/// between recording a receipt and asking Apple, or the database failed after Apple answered).
///
/// Both sets are derived from the log (`LedgerReads`), so a restart resumes them and several
/// servers may run workers: each append expects the submission's version, so one of them
/// records the answer.
public final class RetryWorker: Sendable {
    let service: PurchaseService
    let pollInterval: Duration
    /// How long a submission may stay undecided before the worker takes it over: longer than a
    /// request takes to ask Apple (both endpoints, with their time-outs) and decide.
    let orphanGrace: Duration
    let logger: Logger
    /// Every submission at or before this position is decided, as far as this worker has seen:
    /// the orphan scan starts after it, so it does not walk the decided past on every pass. Nil
    /// until the first pass reads where the servers left it (`WorkerMark.undecidedSubmissions`): from the
    /// first submission, a start at 20,000,000 events walked 3,050,000 of them (4.8 s of a core).
    private let decidedThrough = Mutex<Int64?>(nil)

    public init(service: PurchaseService, pollInterval: Duration = .milliseconds(500), orphanGrace: Duration = .seconds(120), logger: Logger) {
        self.service = service
        self.pollInterval = pollInterval
        self.orphanGrace = orphanGrace
        self.logger = logger
    }

    /// Retries until the task is cancelled.
    public func run() async {
        await pollUntilCancelled(every: pollInterval, logger: logger, failure: "retry worker pass failed") { _ = try await runOnce() }
    }

    /// Decides the abandoned submissions and retries every pending one that is due; returns how
    /// many it worked on.
    @discardableResult
    public func runOnce() async throws -> Int {
        var worked = try await resolveOrphans()
        // Retries are scheduled on the machine's clock: the ledger's may be a simulated one.
        let now = service.machineClock()
        for item in try await service.reads.pendingVerifications() where item.pending.nextAttemptAtMs <= now {
            if Task.isCancelled { break }
            try await retry(item)
            worked += 1
        }
        return worked
    }

    /// The number of receipts waiting for Apple now.
    public func pendingCount() async throws -> Int {
        try await service.reads.pendingVerifications().count
    }

    /// Decides each submission recorded longer than `orphanGrace` ago whose stream holds only
    /// `ReceiptSubmitted`, as its request would have.
    private func resolveOrphans() async throws -> Int {
        let known = decidedThrough.withLock { $0 }
        let after = if let known { known } else { try await service.reads.position(of: .undecidedSubmissions) }
        let limit = 1_000
        let (open, head) = try await service.reads.openSubmissions(after: after, grace: orphanGrace, limit: limit)
        var resolved = 0
        var through = open.count == limit ? open[open.count - 1].position : head
        for item in open {
            guard item.abandoned, !Task.isCancelled else {
                through = min(through, item.position - 1)
                break
            }
            do {
                try await resolve(item.submitted)
                resolved += 1
            } catch {
                // Not decided: scan from here again next pass.
                through = min(through, item.position - 1)
                throw error
            }
        }
        decidedThrough.withLock { $0 = max($0 ?? 0, after, through) }
        // Shared, so the next start (this server's or another's) begins here too.
        if through > after { try await service.reads.move(.undecidedSubmissions, to: through) }
        return resolved
    }

    private func resolve(_ submitted: ReceiptSubmitted) async throws {
        guard let outcome = try await service.resume(submitted, attempt: 1, at: 1, metadata: RequestMetadata(actor: "retry-worker")) else { return }
        logger.notice("decided a submission its request left undecided", metadata: [
            "submission_id": "\(submitted.submissionId)", "outcome": "\(outcome.label)",
        ])
    }

    private func retry(_ item: LedgerReads.PendingVerification) async throws {
        let id = item.pending.submissionId
        let events = try await service.log.read(stream: Streams.submission(id))
        guard case .receiptSubmitted(let submitted)? = events.first?.event else {
            logger.error("pending submission without ReceiptSubmitted", metadata: ["submission_id": "\(id)"])
            return
        }
        guard let outcome = try await service.resume(
            submitted, attempt: item.pending.attempt + 1, at: item.streamVersion, metadata: RequestMetadata(actor: "retry-worker")) else { return }
        logger.info("retried a pending submission", metadata: [
            "submission_id": "\(id)", "attempt": "\(item.pending.attempt + 1)", "outcome": "\(outcome.label)",
        ])
    }
}

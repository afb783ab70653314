import EventStore
import Foundation
import Ledger
import LedgerService
import LedgerStore
import Logging
import Postgres

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
    public let orphanGrace: Duration
    let logger: Logger
    /// Every submission at or before it is decided: the orphan scan starts after it, so it does
    /// not walk the decided past on every pass, nor on a server's first.
    private let decided: ScanMark

    public init(service: PurchaseService, pollInterval: Duration = .milliseconds(500), orphanGrace: Duration = .seconds(120), logger: Logger) {
        self.service = service
        self.decided = ScanMark(.undecidedSubmissions, reads: service.reads)
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
        let after = try await decided.start()
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
        try await decided.reached(through, from: after)
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

import EventStore
import Foundation
import Ledger
import Logging
import Postgres

/// Asks Apple again about receipts it could not verify, with backoff, until it answers.
///
/// The pending set is derived from the log (submissions whose last event is
/// `VerificationPending`), so a restart resumes it and several servers may run workers: each
/// retry appends expecting the submission's version, so one of them records the answer.
public final class RetryWorker: Sendable {
    let service: PurchaseService
    let pollInterval: Duration
    let logger: Logger

    public init(service: PurchaseService, pollInterval: Duration = .milliseconds(500), logger: Logger) {
        self.service = service
        self.pollInterval = pollInterval
        self.logger = logger
    }

    /// One pending submission: its stream's version and the last pending event.
    struct Pending {
        var streamVersion: Int64
        var pending: VerificationPending
    }

    /// Retries until the task is cancelled.
    public func run() async {
        while !Task.isCancelled {
            do {
                _ = try await runOnce()
            } catch is CancellationError {
                return
            } catch {
                logger.warning("retry worker pass failed; trying again", metadata: ["error": "\(LedgerServiceError.mapping(error))"])
            }
            try? await Task.sleep(for: pollInterval)
        }
    }

    /// Retries every pending submission that is due; returns how many were retried.
    @discardableResult
    public func runOnce() async throws -> Int {
        // Retries are scheduled on the wall clock: the business clock may be a simulated one.
        let now = PurchaseService.wallClockMs()
        let due = try await pending().filter { $0.pending.nextAttemptAtMs <= now }
        var retried = 0
        for item in due {
            if Task.isCancelled { break }
            try await retry(item)
            retried += 1
        }
        return retried
    }

    /// The number of receipts waiting for Apple now.
    public func pendingCount() async throws -> Int {
        try await pending().count
    }

    func pending() async throws -> [Pending] {
        try await service.pool.withConnection { connection in
            try connection.query("""
                SELECT p.stream_version, p.payload FROM events p
                WHERE p.event_type = 'VerificationPending'
                  AND NOT EXISTS (SELECT 1 FROM events n WHERE n.stream_id = p.stream_id AND n.stream_version > p.stream_version)
                ORDER BY (p.payload->>'next_attempt_at_ms')::bigint
                LIMIT 1000
                """).map { row in
                Pending(
                    streamVersion: try row.decode(0),
                    pending: try LedgerJSON.decoder.decode(VerificationPending.self, from: Data(row.decode(1, as: JSONB.self).bytes)))
            }
        }
    }

    private func retry(_ item: Pending) async throws {
        let id = item.pending.submissionId
        let events = try await service.log.read(stream: Streams.submission(id))
        guard case .receiptSubmitted(let submitted)? = events.first?.event else {
            logger.error("pending submission without ReceiptSubmitted", metadata: ["submission_id": "\(id)"])
            return
        }
        guard let document = try await service.documents.get(submitted.documentSha256) else {
            logger.critical("the receipt of a pending submission is missing from documents", metadata: ["submission_id": "\(id)"])
            return
        }
        let submission = Submission(
            submissionId: id, userId: submitted.userId, orderId: submitted.orderId, transactionId: submitted.transactionId)
        let outcome = try await service.verify(
            submission, receiptData: String(decoding: document, as: UTF8.self), attempt: item.pending.attempt + 1,
            submissionVersion: item.streamVersion, metadata: RequestMetadata(actor: "retry-worker"))
        logger.info("retried a pending receipt", metadata: [
            "submission_id": "\(id)", "attempt": "\(item.pending.attempt + 1)", "outcome": "\(outcome.label)",
        ])
    }
}

extension SubmissionOutcome {
    /// `delivered`, `already_delivered`, `pending` or `rejected`: the API's `outcome`.
    public var label: String {
        switch self {
        case .delivered: "delivered"
        case .alreadyDelivered: "already_delivered"
        case .pending: "pending"
        case .rejected: "rejected"
        }
    }
}

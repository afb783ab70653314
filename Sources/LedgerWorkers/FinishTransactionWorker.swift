import Foundation
import Ledger
import LedgerService
import LedgerStore
import Logging
import Synchronization

/// `LEDGER_FINISH_TRANSACTIONS=1`: finishes each delivered transaction with Apple once its
/// delivery is recorded (Finish Transaction, API 1.20), the server half of the lost-order
/// problem: a client that crashed before `finish()` leaves nothing open on the device.
///
/// The deliveries come from the log (`LedgerReads.unfinishedDeliveries`), oldest first. A
/// transaction Apple cannot finish now waits its own backoff (2 s doubling to an hour, asked
/// again forever) while the ones after it go on; three failures in a row mean Apple is down, and
/// end the pass. How far it got is kept in this process and shared with the other servers
/// (`WorkerMark.unfinishedDeliveries`): every delivery before the first one still waiting is
/// finished or refused, so the next pass, and a server's first after a start, begins there.
/// Of several servers' workers, one records each (the stream
/// is claimed expecting none); two may each ask Apple once, which Apple answers the same.
public final class FinishTransactionWorker: Sendable {
    let service: PurchaseService
    let interval: Duration
    let logger: Logger
    /// Every delivery at or before it is finished or refused.
    private let scanned: ScanMark
    /// Transactions Apple could not finish yet: failures so far and when to ask again.
    private let waiting = Mutex<[String: (failures: Int, next: ContinuousClock.Instant)]>([:])

    public init(service: PurchaseService, interval: Duration = .seconds(2), logger: Logger) {
        self.service = service
        self.scanned = ScanMark(.unfinishedDeliveries, reads: service.reads)
        self.interval = interval
        self.logger = logger
    }

    public func run() async {
        await pollUntilCancelled(every: interval, logger: logger, failure: "finish transaction pass failed") { _ = try await runOnce() }
    }

    /// One pass; returns how many transactions were recorded finished (or refused).
    @discardableResult
    public func runOnce() async throws -> Int {
        var recorded = 0
        let start = try await scanned.start()
        var cursor = start
        var firstWaiting: Int64?
        var failuresInARow = 0
        func reached() -> Int64 { firstWaiting.map { $0 - 1 } ?? cursor }
        defer { scanned.reachedHere(reached()) }
        // The waiting transactions this pass met: at its end, the others were finished (by
        // another server's worker) and are forgotten.
        var met = Set<String>()
        while true {
            let page = try await service.reads.unfinishedDeliveries(after: cursor, limit: 100)
            guard !page.isEmpty else {
                waiting.withLock { $0 = $0.filter { met.contains($0.key) } }
                try await scanned.reached(reached(), from: start)
                return recorded
            }
            for delivery in page {
                met.insert(delivery.transactionId)
                let now = ContinuousClock.now
                if let wait = waiting.withLock({ $0[delivery.transactionId] }), wait.next > now {
                    firstWaiting = firstWaiting ?? delivery.position
                    cursor = delivery.position
                    continue
                }
                if try await service.finishWithApple(delivery, metadata: RequestMetadata(actor: "finish-transaction-worker")) {
                    _ = waiting.withLock { $0.removeValue(forKey: delivery.transactionId) }
                    recorded += 1
                    failuresInARow = 0
                } else {
                    let failures = waiting.withLock { waiting -> Int in
                        let failures = (waiting[delivery.transactionId]?.failures ?? 0) + 1
                        waiting[delivery.transactionId] = (failures, ContinuousClock.now + Self.backoff(afterFailures: failures))
                        return failures
                    }
                    logger.notice(
                        "Apple could not finish a transaction now; it is asked again later",
                        metadata: ["transaction_id": "\(delivery.transactionId)", "failures": "\(failures)"])
                    firstWaiting = firstWaiting ?? delivery.position
                    failuresInARow += 1
                    if failuresInARow >= 3 { return recorded }
                }
                cursor = delivery.position
            }
        }
    }

    /// 2 s after the first failure, doubling, at most an hour.
    static func backoff(afterFailures failures: Int) -> Duration {
        .seconds(min(3_600, 1 << min(max(failures, 1), 12)))
    }
}

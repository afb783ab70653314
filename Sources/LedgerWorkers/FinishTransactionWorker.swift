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
/// The deliveries come from the log (`LedgerReads.unfinishedDeliveries`), oldest first. How far
/// it got is kept in this process: every delivery before the first one Apple could not answer
/// is finished or refused, so the next pass starts there; a restart reads from the start, past
/// the finished ones. Apple not answering ends the pass; the next one asks again, for as long
/// as it takes. Of several servers' workers, one records each (the stream is claimed expecting
/// none); two may each ask Apple once, which Apple answers the same.
public final class FinishTransactionWorker: Sendable {
    let service: PurchaseService
    let interval: Duration
    let logger: Logger
    private let scanned = Mutex<Int64>(0)

    public init(service: PurchaseService, interval: Duration = .seconds(2), logger: Logger) {
        self.service = service
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
        while true {
            let after = scanned.withLock { $0 }
            let page = try await service.reads.unfinishedDeliveries(after: after, limit: 100)
            guard !page.isEmpty else { return recorded }
            for delivery in page {
                guard try await service.finishWithApple(delivery, metadata: RequestMetadata(actor: "finish-transaction-worker")) else {
                    logger.notice("Apple could not finish a transaction now; the next pass asks again", metadata: ["transaction_id": "\(delivery.transactionId)"])
                    return recorded
                }
                recorded += 1
                scanned.withLock { $0 = max($0, delivery.position) }
            }
        }
    }
}

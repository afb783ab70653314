import AppStore
import AppStoreClient
import Foundation
import Ledger
import LedgerService
import LedgerStore
import Logging
import Synchronization

/// Gives every sale seen only in a receipt its storefront, price and currency as Apple signed
/// them: asks Apple's Get Transaction Info about each such sale until an answer is recorded and
/// records the verified answer (`PurchaseService.recordTransactionInfo`), never on the request path.
///
/// The sales are derived from the log (`LedgerReads.receiptOnlySales`), a page at a time, oldest
/// first, so a restart resumes and several servers may run workers: the record claims
/// `Streams.transactionInfo(id)` expecting no stream, so one of them records each sale (two
/// workers that read the same sale before either recorded it may each ask Apple once). How far
/// the log was scanned is kept in this process: a restart scans it once from the start, reading
/// past the sales already recorded.
///
/// Apple's answers: a sale Apple does not know (404 4040010) or whose answer cannot be recorded
/// is asked again a day later, by the machine's clock; that schedule lives in this process only
/// (a restart asks such sales again at once, which costs one call each). Apple rate limiting or
/// down (429, 5xx, no answer) ends the pass; the next pass, after its interval and any
/// `Retry-After`, starts again from the first sale not recorded.
public final class TransactionInfoWorker: Sendable {
    let service: PurchaseService
    /// Apple answers each app's key about that app's sales.
    let clients: ServerAPIClients
    let interval: Duration
    let pageSize: Int
    let logger: Logger

    static let dayMs: Int64 = 86_400_000

    struct State: Sendable {
        /// Every sale at or before this position was recorded or is in `waiting`: the scan
        /// starts after it, so a pass does not walk the past again.
        var scannedThrough: Int64 = 0
        /// Sales Apple answered without something to record, with when to ask again
        /// (`machineClock` milliseconds).
        var waiting: [String: (sale: LedgerReads.ReceiptOnlySale, notBeforeMs: Int64)] = [:]
        /// No call to Apple before this (`machineClock` milliseconds): its `Retry-After`.
        var pausedUntilMs: Int64 = 0
        var passes = 0
    }

    private let state = Mutex(State())

    /// What one pass did.
    public struct Summary: Sendable, Hashable {
        /// Sales recorded now.
        public var recorded = 0
        /// Sales found recorded by another worker.
        public var alreadyRecorded = 0
        /// Sales Apple answered without something to record: asked again in a day.
        public var notRecorded = 0
        /// True when Apple could not answer and the pass ended early.
        public var appleUnavailable = false

        public init() {}
    }

    /// `interval` between passes (`LedgerConfiguration.transactionInfoInterval`); `pageSize`
    /// sales read from the log at a time.
    public init(service: PurchaseService, clients: ServerAPIClients, interval: Duration = .seconds(60), pageSize: Int = 100, logger: Logger) {
        self.service = service
        self.clients = clients
        self.interval = interval
        self.pageSize = max(1, pageSize)
        self.logger = logger
    }

    /// Passes until the task is cancelled.
    public func run() async {
        await pollUntilCancelled(every: interval, logger: logger, failure: "transaction info pass failed") { _ = try await runOnce() }
    }

    /// Passes finished so far (failed ones included): for tests that wait for more passes.
    public var passes: Int { state.withLock { $0.passes } }

    /// Sales waiting a day after Apple answered without something to record.
    public var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Asks about the sales due again, then about every new one, until caught up or Apple
    /// cannot answer.
    @discardableResult
    public func runOnce() async throws -> Summary {
        defer { state.withLock { $0.passes += 1 } }
        var summary = Summary()
        let now = service.machineClock()
        let (paused, due): (Bool, [LedgerReads.ReceiptOnlySale]) = state.withLock { state in
            (state.pausedUntilMs > now, state.waiting.values.filter { $0.notBeforeMs <= now }.map { $0.sale }.sorted { $0.position < $1.position })
        }
        if paused { return summary }
        for sale in due {
            if Task.isCancelled { return summary }
            guard try await ask(sale, into: &summary) else { return summary }
        }
        while !Task.isCancelled {
            let after = state.withLock { $0.scannedThrough }
            let (sales, head) = try await service.reads.receiptOnlySales(after: after, limit: pageSize)
            var through = sales.count == pageSize ? sales[sales.count - 1].position : head
            for sale in sales {
                // Listed again after a failed pass: it waits its day all the same.
                if state.withLock({ $0.waiting[sale.transactionId] != nil }) { continue }
                guard !Task.isCancelled, try await ask(sale, into: &summary) else {
                    through = sale.position - 1
                    break
                }
            }
            state.withLock { $0.scannedThrough = max($0.scannedThrough, through) }
            if sales.count < pageSize || summary.appleUnavailable || Task.isCancelled { break }
        }
        if summary != Summary() {
            logger.info("asked Apple about sales seen only in receipts", metadata: [
                "recorded": "\(summary.recorded)", "already_recorded": "\(summary.alreadyRecorded)",
                "not_recorded": "\(summary.notRecorded)", "apple_unavailable": "\(summary.appleUnavailable)",
            ])
        }
        return summary
    }

    /// Asks about one sale; false when Apple cannot answer now (the pass ends).
    private func ask(_ sale: LedgerReads.ReceiptOnlySale, into summary: inout Summary) async throws -> Bool {
        let id = sale.transactionId
        let environment: AppStoreEnvironment = sale.environment == AppStoreEnvironment.sandbox.rawValue ? .sandbox : .production
        let legacy = sale.bundleId == nil ? try await service.reads.legacyApp() : nil
        guard let client = clients.client(for: sale.bundleId, legacyApp: legacy) else {
            // An app no longer served: nothing to ask with, as for a sale Apple does not know.
            summary.notRecorded += 1
            state.withLock { $0.waiting[id] = (sale, service.machineClock() + Self.dayMs) }
            return true
        }
        do {
            let outcome = try await service.recordTransactionInfo(
                transactionId: id, environment: environment, askingWith: client, metadata: RequestMetadata(actor: "transaction-info-worker"))
            switch outcome {
            case .recorded:
                summary.recorded += 1
                state.withLock { $0.waiting[id] = nil }
            case .alreadyRecorded:
                summary.alreadyRecorded += 1
                state.withLock { $0.waiting[id] = nil }
            case .notRecorded(let reason):
                summary.notRecorded += 1
                let notBefore = service.machineClock() + Self.dayMs
                state.withLock { $0.waiting[id] = (sale, notBefore) }
                logger.notice("Apple's Get Transaction Info gave nothing to record; asking again in a day", metadata: [
                    "transaction_id": "\(id)", "environment": "\(sale.environment)", "reason": "\(reason.rawValue)",
                ])
            }
            return true
        } catch let error as ServerAPIError {
            summary.appleUnavailable = true
            if let seconds = error.retryAfterSeconds {
                let until = service.machineClock() + Int64(seconds) * 1_000
                state.withLock { $0.pausedUntilMs = max($0.pausedUntilMs, until) }
            }
            logger.warning("Apple's Get Transaction Info could not be asked now; trying again next pass", metadata: [
                "transaction_id": "\(id)", "error": "\(error)",
            ])
            return false
        }
    }
}

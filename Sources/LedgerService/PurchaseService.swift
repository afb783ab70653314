import AppStore
import EventStore
import Foundation
import Ledger
import Logging
import Postgres

/// The purchase flow (ARCHITECTURE §1): orders, receipts and signed transactions in, Apple
/// asked, decisions recorded. Every input is recorded before anything else happens to it, and
/// a 2xx answer is given only for what is durably recorded.
public final class PurchaseService: Sendable {
    public let log: LedgerLog
    public let documents: DocumentStore
    public let configuration: LedgerConfiguration
    let pool: ConnectionPool
    let verifyReceipt: VerifyReceiptClient
    let signedData: SignedDataVerifiers
    public let catalog: CatalogStore
    let logger: Logger
    public let clock: @Sendable () -> Int64
    let onAppleAttempt: @Sendable (VerifyReceiptAttempt) -> Void

    public init(
        store: EventStore, configuration: LedgerConfiguration, verifyReceipt: VerifyReceiptClient,
        signedData: SignedDataVerifiers, logger: Logger,
        clock: @escaping @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) },
        onAppleAttempt: @escaping @Sendable (VerifyReceiptAttempt) -> Void = { _ in }
    ) {
        self.log = LedgerLog(store: store)
        self.catalog = CatalogStore(log: LedgerLog(store: store))
        self.pool = store.pool
        self.documents = DocumentStore(pool: store.pool)
        self.configuration = configuration
        self.verifyReceipt = verifyReceipt
        self.signedData = signedData
        self.logger = logger
        self.clock = clock
        self.onAppleAttempt = onAppleAttempt
    }

    /// Milliseconds since 1970 on this machine's clock.
    static func wallClockMs() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

    // MARK: - Orders

    /// Records a new order for `productId`; the app passes its `appAccountToken` to StoreKit.
    public func createOrder(userId: String, productId: String, quantity: Int64, metadata: RequestMetadata) async throws -> OrderCreated {
        try await mappingDatabaseErrors {
            let catalog = try await currentCatalog()
            guard catalog[productId] != nil else {
                throw LedgerServiceError(.unknownProduct, "product \(productId) is not in the catalog")
            }
            let order = OrderCreated(
                orderId: UUID().uuidString.lowercased(), userId: userId, productId: productId, quantity: quantity,
                appAccountToken: UUID().uuidString.lowercased(), createdAtMs: clock())
            try await log.append(
                [LedgerAppend(stream: Streams.order(order.orderId), expectation: .noStream, events: [.orderCreated(order)])],
                metadata: metadata)
            return order
        }
    }

    /// Appends `CatalogLoaded` for the products of a catalog file.
    public func loadCatalog(_ file: Data, metadata: RequestMetadata) async throws -> CatalogLoaded {
        try await catalog.load(file, metadata: metadata)
    }

    func currentCatalog() async throws -> Catalog {
        let cache = catalog
        return try await pool.withConnection { try cache.current(on: $0) }
    }

    // MARK: - Deciding

    /// Decides `submission` against `evidence` and appends the decision together with
    /// `leadingEvents` (which continue the submission's stream at `submissionVersion`) and the
    /// `citedDocuments` they cite. When another decision got to one of the streams first, loads
    /// again and decides again.
    func decideAndRecord(
        _ submission: Submission, evidence: Evidence, submissionVersion: Int64, leadingEvents: [LedgerEvent], citedDocuments: [SQL] = [],
        metadata: RequestMetadata
    ) async throws -> SubmissionOutcome {
        var attempt = 0
        while true {
            attempt += 1
            let context = try await loadContext(evidence: evidence, userId: submission.userId, orderId: submission.orderId)
            let decision = PurchaseDecider.decide(submission, evidence: evidence, context: context)
            let closing = LedgerAppend(
                stream: Streams.submission(submission.submissionId), expectation: .exactly(submissionVersion),
                events: leadingEvents + decision.closingEvents(for: submission))
            do {
                try await log.append([closing] + decision.appends, metadata: metadata, alongside: citedDocuments)
                return SubmissionOutcome(decision.outcome)
            } catch EventStoreError.Code.wrongExpectedVersion where attempt < 8 {
                // Someone else decided first. If it was about this very submission (the retry
                // worker and a client racing), their answer stands.
                if let settled = try await settledOutcome(of: submission, after: submissionVersion) {
                    return settled
                }
                continue
            }
        }
    }

    func loadContext(evidence: Evidence, userId: String?, orderId: String?) async throws -> PurchaseContext {
        let cache = catalog
        let configuration = configuration
        return try await pool.withConnection { connection in
            let loader = ContextLoader(connection: connection)
            return try loader.load(
                evidence: evidence, userId: userId, namedOrderId: orderId, catalogs: cache,
                configuration: configuration)
        }
    }

    /// The outcome already recorded for `submission` past `version`, if any: the answer the
    /// decision that won gave, rebuilt from its events, so a client that lost the race hears
    /// the same deliveries.
    func settledOutcome(of submission: Submission, after version: Int64) async throws -> SubmissionOutcome? {
        let events = try await log.read(stream: Streams.submission(submission.submissionId)).filter { $0.version > version }
        for (_, event) in events.reversed() {
            switch event {
            case .deliveryRejected(let r): return .rejected(r.code, r.message)
            case .verificationPending(let p): return .pending(retryAfterSeconds: p.retryAfterSeconds)
            case .submissionResolved(let r):
                let records = try await transactionRecords(r.transactionIds)
                guard r.outcome == "delivered" else { return .alreadyDelivered(records.map(\.delivery)) }
                // Everything a decision delivers goes to the submitting user. A transaction
                // delivered before to someone else came by transfer: its first event names the
                // earlier holder and its order, the answer named neither.
                return .delivered(records.map { record in
                    var delivery = record.delivery
                    if delivery.userId != submission.userId {
                        delivery.userId = submission.userId
                        delivery.orderId = nil
                    }
                    return delivery
                })
            default: continue
            }
        }
        return nil
    }

    /// What each transaction became (its stream's first event: a delivery or a renewal), in
    /// the order of `transactionIds`.
    func transactionRecords(_ transactionIds: [String]) async throws -> [TransactionRecord] {
        guard !transactionIds.isEmpty else { return [] }
        let found = try await pool.withConnection { connection in
            try ContextLoader.transactionRecords(connection.query(ContextLoader.transactionsQuery(transactionIds)))
        }
        return transactionIds.compactMap { found[$0] }
    }
}

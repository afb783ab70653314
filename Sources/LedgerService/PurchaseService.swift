import AppStore
import AppStoreClient
import EventStore
import Foundation
import Ledger
import LedgerStore
import Logging
import Postgres
import Primitives

/// The purchase flow (docs/architecture.md §1): orders, receipts and signed transactions in, Apple
/// asked, decisions recorded. Every input is recorded before anything else happens to it, and
/// a 2xx answer is given only for what is durably recorded.
public final class PurchaseService: Sendable {
    public let log: LedgerLog
    /// Every question the flow asks of the log.
    public let reads: LedgerReads
    public let documents: DocumentStore
    /// User ids in, handles recorded; handles out, ids shown (docs/erasure.md).
    public let people: People
    public let configuration: LedgerConfiguration
    let pool: ConnectionPool
    let verifyReceipt: VerifyReceiptClient
    public let signedData: SignedDataVerifiers
    /// The App Store Server API, a client per app, when credentials are configured; nil: the
    /// ledger does not ask.
    public let serverAPI: ServerAPIClients?
    public var catalog: CatalogStore { reads.catalogs }
    let logger: Logger
    /// The ledger's now: every date it records (orders, submissions, notifications, spends) and
    /// decides or reports by. Tests and the demo set a simulated Apple's, so both agree.
    public let clock: WallClock
    /// The machine's own time, for the retry schedule of pending receipts: retries wait real
    /// time even where `clock` is simulated. The same clock as `clock` in production.
    public let machineClock: WallClock
    let onAppleAttempt: @Sendable (VerifyReceiptAttempt) -> Void
    /// Spends of one wallet take turns within this server (see `KeyedTurns`).
    let walletTurns = KeyedTurns()
    /// Acts on one purchase (Set App Account Token) take turns within this server.
    let actTurns = KeyedTurns()

    public init(
        store: EventStore, configuration: LedgerConfiguration, verifyReceipt: VerifyReceiptClient,
        signedData: SignedDataVerifiers, serverAPI: ServerAPIClients? = nil, logger: Logger,
        clock: WallClock, machineClock: WallClock,
        onAppleAttempt: @escaping @Sendable (VerifyReceiptAttempt) -> Void = { _ in }
    ) {
        self.log = LedgerLog(store: store)
        self.reads = LedgerReads(pool: store.pool)
        self.pool = store.pool
        let subjects = SubjectStore(pool: store.pool, keyEncryptionKey: configuration.keyEncryptionKey)
        self.documents = DocumentStore(pool: store.pool, subjects: subjects)
        self.people = People(subjects: subjects)
        self.configuration = configuration
        self.verifyReceipt = verifyReceipt
        self.signedData = signedData
        self.serverAPI = serverAPI
        self.logger = logger
        self.clock = clock
        self.machineClock = machineClock
        self.onAppleAttempt = onAppleAttempt
    }

    // MARK: - Orders

    /// Records a new order for `productId`; the app passes its `appAccountToken` to StoreKit.
    /// With an `idempotencyKey` (the client's `Idempotency-Key`), the same key again answers the
    /// order it created first, and with another user, product, quantity or app is refused
    /// (`idempotency_conflict`): a client retrying after a time-out never creates two orders.
    /// `bundleId` names the app (`app(named:)`); its catalog must sell `productId`.
    public func createOrder(
        userId: String, productId: String, quantity: Int64, bundleId: String? = nil, idempotencyKey: IdempotencyKey? = nil,
        metadata: RequestMetadata
    ) async throws -> OrderCreated {
        let app = try app(named: bundleId)
        return try await mappingDatabaseErrors {
            try await once(key: idempotencyKey?.stored, naming: "Idempotency-Key \(idempotencyKey?.text ?? "")", earlier: { event in
                guard case .orderCreated(let order) = event, order.userId == userId, order.productId == productId, order.quantity == quantity,
                      (order.bundleId ?? app) == app
                else { return nil }
                return order
            }) {
                let catalog = try await reads.catalog(of: app)
                guard catalog[productId] != nil else {
                    throw LedgerServiceError(.unknownProduct, "product \(productId) is not in the catalog of \(app)")
                }
                let token = try await people.issueToken(forUser: userId)
                let order = OrderCreated(
                    orderId: UUID().uuidString.lowercased(), userId: userId, productId: productId, quantity: quantity,
                    appAccountToken: token.recorded, createdAtMs: clock(), bundleId: app)
                // The token is bound to its person in the order's own transaction.
                try await log.append(
                    [LedgerAppend(stream: Streams.order(order.orderId), expectation: .noStream, events: [.orderCreated(order)])],
                    metadata: metadata, alongside: token.binding.map { [$0] } ?? [], idempotencyKey: idempotencyKey?.stored)
                return order
            }
        }
    }

    /// Appends `CatalogLoaded` for the products of a catalog file.
    /// Loads `bundleId`'s catalog (nil: the first app's).
    public func loadCatalog(_ file: Data, bundleId: String? = nil, metadata: RequestMetadata) async throws -> CatalogLoaded {
        try await catalog.load(file, bundleId: bundleId ?? configuration.bundleId, into: log, metadata: metadata)
    }

    // MARK: - Deciding

    /// Decides `submission` against `evidence` and appends the decision together with
    /// `leadingEvents` (which continue the submission's stream at `submissionVersion`) and the
    /// `citedDocuments` they cite. When another decision got to one of the streams first, loads
    /// again and decides again.
    func decideAndRecord(
        _ submission: Submission, evidence: Evidence, submissionVersion: Int64, leadingEvents: [LedgerEvent], citedDocuments: [SQL] = [],
        metadata: RequestMetadata,
        decider: @Sendable (Submission, Evidence, PurchaseContext) -> Decision = { PurchaseDecider.decide($0, evidence: $1, context: $2) }
    ) async throws -> SubmissionOutcome {
        let evidence = try await people.recordingTokens(of: evidence)
        var attempt = 0
        while true {
            attempt += 1
            let context = try await loadContext(evidence: evidence, userId: submission.userId, orderId: submission.orderId, app: submission.bundleId)
            let decision = decider(submission, evidence, context)
            do {
                try await log.append(
                    decision.appends(for: submission, expecting: .exactly(submissionVersion), after: leadingEvents),
                    metadata: metadata, alongside: citedDocuments)
                return SubmissionOutcome(decision.outcome)
            } catch EventStoreError.Code.wrongExpectedVersion {
                // Someone else decided first. If it was about this very submission (the retry
                // worker and a client racing), their answer stands; otherwise decide again.
                if let settled = try await settledOutcome(of: submission, after: submissionVersion) {
                    return settled
                }
                // The receipt is recorded: the worker finishes it if the client does not retry.
                guard attempt < 8 else {
                    throw LedgerServiceError(.busy, "the purchases of submission \(submission.submissionId) are being decided by other requests; ask again")
                }
            }
        }
    }

    /// `app`: the app the decision must be for (a limited token's); nil: the one the evidence names.
    func loadContext(evidence: Evidence, userId: String?, orderId: String?, app limit: String? = nil) async throws -> PurchaseContext {
        try await reads.context(
            for: evidence, userId: userId, orderId: orderId, bundleId: limit ?? app(of: evidence),
            transferPolicy: configuration.transferPolicy)
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
                let records = try await reads.transactionRecords(r.transactionIds)
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
}

import AppStore
import AppStoreClient
import EventStore
import Foundation
import Ledger
import LedgerService
import LedgerStore
import Logging
import Postgres
import Primitives

/// Recovers what Apple notified and the ledger never recorded (the endpoint was down, Apple's
/// retries ran out): pages Get Notification History from the last reconciled point and records
/// every notification through the same path as a posted one, so each is recorded once by its
/// `notificationUUID` and decided by the same rules. The point reached is an event, so a
/// restart resumes; `purchase-ledger reconcile` and a worker in `serve` run it.
///
/// Apple keeps a notification history per app, read with a token naming that app: each app
/// served is reconciled on its own, with its own point reached (`AppStreams.reconciliation`).
public struct Reconciler: Sendable {
    let service: PurchaseService
    let clients: ServerAPIClients
    let logger: Logger
    /// Purchases made this recently are not recovered (`PurchaseService.recoverPurchases`): the
    /// app's own submission of them may be on its way. A later pass, whose window overlaps, does.
    let recoveryGrace: Duration

    /// Each pass starts this long before where the last one ended: a notification Apple dates
    /// a little before it lists it is still seen. Recording is idempotent, so overlap is free.
    static let overlapMs: Int64 = 3_600_000
    static let dayMs: Int64 = 86_400_000

    public init(service: PurchaseService, clients: ServerAPIClients, logger: Logger, recoveryGrace: Duration = .seconds(600)) {
        self.service = service
        self.clients = clients
        self.logger = logger
        self.recoveryGrace = recoveryGrace
    }

    /// Reconciles now and then every `interval` until the task is cancelled (`serve`).
    public func run(every interval: Duration) async {
        await pollUntilCancelled(every: interval, logger: logger, failure: "reconciliation with Apple failed") { _ = try await run() }
    }

    public struct Summary: Sendable, Hashable {
        public var bundleId: String
        public var environment: AppStoreEnvironment
        public var fromMs: Int64
        public var toMs: Int64
        public var seen = 0
        public var recorded = 0
        public var pages = 0
        /// Subscriptions whose expiry passed unheard of, asked about with Get All Subscription Statuses.
        public var subscriptionsAsked = 0
        /// Purchases Apple's history names that the log had no record of (a restore lost them,
        /// or the app never submitted them): delivered to the user the log names, or unclaimed.
        public var recovered = RecoveredPurchases()
    }

    /// Reconciles each app and environment from `sinceMs` (else where the app's last pass
    /// ended, else as far back as Apple keeps history: 180 days in production, 30 in sandbox)
    /// up to now. An app Apple cannot answer for now does not stop the others: the first such
    /// error is thrown once every app was tried.
    public func run(sinceMs: Int64? = nil, environments: [AppStoreEnvironment] = [.production, .sandbox]) async throws -> [Summary] {
        var summaries: [Summary] = []
        var failure: (any Error)?
        let legacy = try await service.reads.legacyApp()
        for app in clients.bundleIds {
            guard let client = clients.client(for: app) else { continue }
            let streams = AppStreams(bundleId: app, legacyApp: legacy)
            for environment in environments {
                do {
                    summaries.append(try await run(environment, of: streams, asking: client, sinceMs: sinceMs))
                } catch {
                    failure = failure ?? error
                }
            }
        }
        if let failure { throw failure }
        return summaries
    }

    /// Asks Apple for a subscription's status and records what it shows (renewals, refunds,
    /// renewal state) by the same rules as a notification; the answer's document, or nil when
    /// Apple could not say.
    private func askStatuses(
        _ originalTransactionId: String, environment: AppStoreEnvironment, asking client: ServerAPIClient
    ) async throws -> (name: String, statement: SQL)? {
        let answer: ServerAPIAnswer<SubscriptionStatusesResponse>
        do {
            answer = try await client.subscriptionStatuses(originalTransactionId, environment: environment)
        } catch {
            logger.warning("Apple's subscription status could not be read", metadata: ["original_transaction_id": "\(originalTransactionId)", "error": "\(error)"])
            return nil
        }
        var evidence = Evidence(bundleId: nil, environment: environment.rawValue, entries: [])
        var transactions: [SignedTransaction] = []
        for item in answer.value.data.flatMap(\.lastTransactions) {
            guard let jws = item.signedTransactionInfo, let transaction = try? await service.signedData.verifyTransaction(jws) else { continue }
            transactions.append(transaction.payload)
            let signed = Evidence(signed: transaction.payload)
            evidence.bundleId = evidence.bundleId ?? signed.bundleId
            for entry in signed.entries { evidence.merge(entry) }
            if let renewalJWS = item.signedRenewalInfo, let renewal = try? await service.signedData.verifyRenewalInfo(renewalJWS).payload {
                evidence.observe(renewal, fallbackMs: service.clock())
            }
        }
        // It lists the subscriber's transactions and token: sealed for them (docs/erasure.md).
        let document = DocumentStore.insert(answer.body, kind: "apple_subscription_statuses", sealedFor: try await service.documentSeal(for: transactions))
        try await service.recordObservation(evidence, source: "statuses:\(originalTransactionId)", citing: document.statement)
        return document
    }

    private func run(_ environment: AppStoreEnvironment, of app: AppStreams, asking client: ServerAPIClient, sinceMs: Int64?) async throws -> Summary {
        let stream = app.reconciliation(environment: environment.rawValue)
        let passes = try await service.log.read(stream: stream)
        var last: ReconciliationCompleted?
        for case .reconciliationCompleted(let pass) in passes.map(\.event) { last = pass }
        let to = service.clock()
        let oldest = to - (environment == .production ? 180 : 30) * Self.dayMs
        let from = max(oldest, sinceMs ?? last.map { $0.toMs - Self.overlapMs } ?? oldest)
        var summary = Summary(bundleId: app.bundleId, environment: environment, fromMs: from, toMs: to)
        var pages: [(name: String, statement: SQL)] = []
        var token: String?
        // Apple refuses an empty window (start not before end): nothing to page then.
        var more = from < to
        while more {
            let answer: ServerAPIAnswer<NotificationHistoryResponse>
            do {
                answer = try await client.notificationHistory(
                    NotificationHistoryRequest(startDate: from, endDate: to), environment: environment, paginationToken: token)
            } catch {
                throw LedgerServiceError(.appleUnavailable, "Apple's notification history (\(app.bundleId), \(environment.rawValue)): \(error)")
            }
            // A page names many people: it is kept without their signed payloads, each of which
            // is recorded as its own notification, sealed for its person (docs/erasure.md).
            pages.append(DocumentStore.insert(NotificationHistoryPage.withoutPayloads(answer.body), kind: "apple_notification_history"))
            summary.pages += 1
            for item in answer.value.notificationHistory {
                summary.seen += 1
                let body = Data(try JSONEncoder().encode(["signedPayload": item.signedPayload]))
                do {
                    if case .recorded = try await service.receiveNotification(body: body, metadata: RequestMetadata(actor: "reconcile")) {
                        summary.recorded += 1
                    }
                    // Recorded now or before: a purchase it names may still be missing from the log.
                    let recovered = try await service.recoverPurchases(notificationBody: body, purchasedBeforeMs: to - Millis.of(recoveryGrace))
                    summary.recovered.delivered += recovered.delivered
                    summary.recovered.unclaimed += recovered.unclaimed
                } catch let error as LedgerServiceError where error.code == .unauthenticated {
                    // Apple's own history should always verify; if one does not, it is kept out
                    // and said, and the rest go on.
                    logger.error("a notification in Apple's history does not verify; not recorded", metadata: ["error": "\(error)"])
                } catch let error as LedgerServiceError where error.code == .invalidRequest {
                    // Verified, but its content is not understood: kept unread as evidence
                    // (`receiveNotification` said so in the log); the rest go on.
                    logger.error("a notification in Apple's history is not understood; kept unread", metadata: ["error": "\(error)"])
                }
            }
            token = answer.value.hasMore == true ? answer.value.paginationToken : nil
            more = token != nil
        }
        // Subscriptions whose expiry passed with neither a renewal nor an expiry heard of.
        // This app's: one recorded before events named their app is the legacy app's.
        for (original, recorded, bundle) in try await service.reads.subscriptionsOverdue(nowMs: to)
        where recorded == environment.rawValue && (bundle.map { $0 == app.bundleId } ?? app.isLegacy) {
            if let page = try await askStatuses(original, environment: environment, asking: client) {
                pages.append(page)
                summary.subscriptionsAsked += 1
            }
        }
        let completed = ReconciliationCompleted(
            environment: environment.rawValue, fromMs: from, toMs: to, notificationsSeen: summary.seen,
            notificationsRecorded: summary.recorded, documentSha256List: pages.map(\.name), bundleId: app.bundleId)
        do {
            try await service.log.append(
                [LedgerAppend(stream: stream, expectation: passes.last.map { .exactly($0.version) } ?? .noStream, events: [.reconciliationCompleted(completed)])],
                metadata: RequestMetadata(actor: "reconcile"), alongside: pages.map(\.statement))
        } catch EventStoreError.Code.wrongExpectedVersion {
            // Another server reconciled meanwhile; what this pass found is recorded all the same.
            logger.notice("another reconciliation finished first; this pass's point is not kept", metadata: [
                "app": "\(app.bundleId)", "environment": "\(environment.rawValue)",
            ])
        }
        logger.info("reconciled with Apple's notification history", metadata: [
            "app": "\(app.bundleId)", "environment": "\(environment.rawValue)", "seen": "\(summary.seen)", "recorded": "\(summary.recorded)", "pages": "\(summary.pages)",
            "recovered": "\(summary.recovered.delivered)", "unclaimed": "\(summary.recovered.unclaimed)",
        ])
        return summary
    }
}

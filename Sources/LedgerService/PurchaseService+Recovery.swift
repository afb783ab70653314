import AppStore
import AppStoreClient
import EventStore
import Foundation
import Ledger
import LedgerStore
import Postgres

/// What reconciliation's recovery recorded for one notification of Apple's history.
public struct RecoveredPurchases: Sendable, Hashable {
    /// Purchases delivered to the user the log names for them.
    public var delivered = 0
    /// Purchases no user could be named for: recorded unclaimed.
    public var unclaimed = 0

    public init(delivered: Int = 0, unclaimed: Int = 0) {
        self.delivered = delivered
        self.unclaimed = unclaimed
    }
}

extension PurchaseService {
    /// Reconciliation's second look at a notification of Apple's history (docs/backup-and-restore.md):
    /// the purchases it names that the log has no record of (lost by a restore, or never
    /// submitted by the app) are recovered by `PurchaseDecider.recover`, with the notification's
    /// body as their evidence. Whether the notification was recorded before or not: exactly once
    /// comes from the transactions' streams. Only purchases made at or before `purchasedBeforeMs`,
    /// so the app's own submission of a purchase made a moment ago is not raced.
    public func recoverPurchases(notificationBody body: Data, purchasedBeforeMs: Int64) async throws -> RecoveredPurchases {
        struct Shape: Decodable { var signedPayload: String? }
        guard let signedPayload = (try? JSONDecoder().decode(Shape.self, from: body))?.signedPayload,
              let verified = try? await signedData.verifyNotification(signedPayload: signedPayload),
              let transaction = verified.transaction?.payload
        else { return RecoveredPurchases() }
        var evidence = Evidence(signed: transaction)
        evidence.entries = evidence.entries.filter { ($0.purchaseDateMs ?? .max) <= purchasedBeforeMs }
        guard !evidence.entries.isEmpty, serves(evidence) else {
            return RecoveredPurchases()
        }
        let notificationId = verified.payload.notificationUUID ?? DocumentStore.name(of: body)
        evidence = try await people.recordingTokens(of: evidence)
        for attempt in 1...8 {
            var first = try await loadContext(evidence: evidence, userId: nil, orderId: nil)
            first.accountUsers = try await accountUsers(of: evidence, context: first)
            // With the user's open orders, so a recovered purchase fulfils the order its token names.
            let user = PurchaseDecider.recoveryUsers(evidence, context: first).first
            var context = first
            if let user {
                context = try await loadContext(evidence: evidence, userId: user, orderId: nil)
                context.accountUsers = first.accountUsers
            }
            let effects = PurchaseDecider.recover(evidence, source: "recovered:\(notificationId)", context: context)
            guard !effects.isEmpty else { return RecoveredPurchases() }
            let document = DocumentStore.insert(
                Array(body), kind: "notification_v2", sealedFor: try await people.documentSeal(naming: effects, tokens: evidence.entries.map(\.appAccountToken)))
            do {
                try await log.append(effects, metadata: RequestMetadata(actor: "reconcile"), alongside: [document.statement])
            } catch EventStoreError.Code.wrongExpectedVersion where attempt < 8 {
                continue
            }
            var counted = RecoveredPurchases()
            for append in effects {
                for event in append.events {
                    if case .purchaseDelivered = event { counted.delivered += 1 }
                    if case .purchaseUnclaimed = event { counted.unclaimed += 1 }
                }
            }
            if counted != RecoveredPurchases() {
                logger.notice("recovered purchases Apple knows and the ledger had no record of", metadata: [
                    "notification_id": "\(notificationId)", "delivered": "\(counted.delivered)", "unclaimed": "\(counted.unclaimed)",
                ])
            }
            return counted
        }
        return RecoveredPurchases()
    }

    /// For each purchase of `evidence` the log does not know, the user its Apple account's other
    /// purchases went to: through their shared `app_transaction_id` (signed deliveries carry it),
    /// else through Apple's transaction history of that account, whose transactions the log may
    /// know (deliveries from receipts carry no `app_transaction_id`).
    func accountUsers(of evidence: Evidence, context: PurchaseContext) async throws -> [String: String] {
        let unknown = evidence.entries.filter { context.transactions[$0.transactionId] == nil }
        guard !unknown.isEmpty else { return [:] }
        var found: [String: String] = [:]
        let byAccount = try await reads.usersByAppTransaction(Array(Set(unknown.compactMap(\.appTransactionId))))
        for entry in unknown {
            if let user = entry.appTransactionId.flatMap({ byAccount[$0] }) { found[entry.transactionId] = user }
        }
        // The history of the account in the evidence's app: Apple answers per app.
        guard let client = serverAPI?.client(for: app(of: evidence)) else { return found }
        let environment: AppStoreEnvironment = evidence.environment == AppStoreEnvironment.sandbox.rawValue ? .sandbox : .production
        for entry in unknown where found[entry.transactionId] == nil {
            var ids: [String] = []
            var revision: String?
            do throws(ServerAPIError) {
                repeat {
                    let page = try await client.transactionHistory(entry.transactionId, environment: environment, revision: revision)
                    for jws in page.value.signedTransactions {
                        if let id = (try? await signedData.verifyTransaction(jws))?.payload.transactionId, id != entry.transactionId { ids.append(id) }
                    }
                    revision = page.value.hasMore == true ? page.value.revision : nil
                } while revision != nil
            } catch {
                // Apple cannot say now: the purchase is recorded unclaimed, which its owner's next
                // submission claims.
                logger.warning("Apple's transaction history could not be read for a recovered purchase", metadata: [
                    "transaction_id": "\(entry.transactionId)", "error": "\(error)",
                ])
                continue
            }
            // The latest of the account's purchases the log delivered names its user (an account
            // that switched users goes with the newer one).
            var latest: (at: Int64, user: String)?
            for case .delivered(let delivered) in try await reads.transactionRecords(ids) {
                let at = delivered.purchaseDateMs ?? 0
                if latest == nil || at > latest!.at { latest = (at, delivered.userId) }
            }
            if let latest { found[entry.transactionId] = latest.user }
        }
        return found
    }
}

import AppStore
import EventStore
import Foundation
import Ledger
import LedgerStore
import Postgres

/// What became of a notification Apple posted.
public enum NotificationOutcome: Sendable, Hashable {
    /// Recorded now, with the id it is recorded under.
    case recorded(id: String)
    /// Apple sent it before (same `notificationUUID`, or the same v1 body): recorded once.
    case duplicate(id: String)
}

extension PurchaseService {
    /// `POST /v1/notifications/apple`: authenticates (v2 signature, v1 shared secret), records the
    /// body verbatim once, and records what it says of transactions in the ledger (refunds,
    /// revocations, renewals, subscription state).
    public func receiveNotification(body: Data, metadata: RequestMetadata) async throws -> NotificationOutcome {
        struct Shape: Decodable { var signedPayload: String? }
        guard let shape = try? JSONDecoder().decode(Shape.self, from: body) else {
            throw LedgerServiceError(.invalidRequest, "the notification is not a JSON object")
        }
        let received: AppleNotificationReceived
        let evidence: Evidence?
        // When Apple signed it: the moment of what it reports (a refund's reversal, say).
        var signedAtMs: Int64?
        if let signedPayload = shape.signedPayload {
            let verified: VerifiedNotification
            do throws(AppStoreError) {
                verified = try await signedData.verifyNotification(signedPayload: signedPayload)
            } catch {
                throw LedgerServiceError(.unauthenticated, "the signed notification does not verify: \(error.code)")
            }
            let payload = verified.payload
            let transaction = verified.transaction?.payload
            signedAtMs = payload.signedDate
            received = AppleNotificationReceived(
                notificationId: payload.notificationUUID ?? DocumentStore.name(of: body), version: "v2",
                notificationType: payload.rawNotificationType ?? "UNKNOWN", subtype: payload.rawSubtype,
                environment: payload.data?.rawEnvironment ?? payload.summary?.rawEnvironment,
                transactionId: transaction?.transactionId, originalTransactionId: transaction?.originalTransactionId,
                consumptionRequestReason: payload.data?.rawConsumptionRequestReason, documentSha256: DocumentStore.name(of: body),
                receivedAtMs: clock())
            evidence = transaction.map { transaction in
                var evidence = Evidence(signed: transaction)
                if let renewal = verified.renewalInfo?.payload { evidence.observe(renewal, fallbackMs: payload.signedDate ?? 0) }
                return evidence
            }
        } else {
            let notification: NotificationV1
            do {
                notification = try NotificationV1(jsonBytes: body)
            } catch {
                throw LedgerServiceError(.invalidRequest, "the body is neither {\"signedPayload\"} nor a v1 notification")
            }
            guard notification.isAuthentic(sharedSecret: configuration.sharedSecret ?? "") else {
                throw LedgerServiceError(.unauthenticated, "the v1 notification's password is not our shared secret")
            }
            let name = DocumentStore.name(of: body)
            let transactions = notification.transactions
            received = AppleNotificationReceived(
                notificationId: name, version: "v1", notificationType: notification.notificationType, subtype: nil,
                environment: notification.environment?.rawValue ?? notification.environmentRaw,
                transactionId: transactions.first?.transactionID,
                originalTransactionId: notification.originalTransactionID ?? transactions.first?.originalTransactionID,
                consumptionRequestReason: nil, documentSha256: name, receivedAtMs: clock())
            evidence = Evidence(notification: notification)
        }
        let document = DocumentStore.insert(Array(body), kind: "notification_\(received.version)").statement
        return try await mappingDatabaseErrors {
            try await recordNotification(received, document: document, evidence: evidence, signedAtMs: signedAtMs, metadata: metadata)
        }
    }

    /// Records what Apple's answer to a question shows of transactions already in the ledger
    /// (renewals, refunds, subscription state), by the rules a notification's evidence follows,
    /// with the answer's `document` in the same transaction. Evidence for another app changes nothing.
    func recordObservation(_ evidence: Evidence, source: String, citing document: SQL) async throws {
        guard AppCheck.refusal(of: evidence, bundleId: configuration.bundleId) == nil else { return }
        for attempt in 1...8 {
            let context = try await loadContext(evidence: evidence, userId: nil, orderId: nil)
            let effects = PurchaseDecider.observe(evidence, source: source, context: context)
            guard !effects.isEmpty else { return }
            do {
                try await log.append(effects, metadata: RequestMetadata(actor: "reconcile"), alongside: [document])
                return
            } catch EventStoreError.Code.wrongExpectedVersion where attempt < 8 {
                continue
            }
        }
    }

    /// Appends the notification and what it shows, with its body (`document`) in the same transaction.
    private func recordNotification(
        _ received: AppleNotificationReceived, document: SQL, evidence: Evidence?, signedAtMs: Int64?, metadata: RequestMetadata
    ) async throws -> NotificationOutcome {
        let stream = Streams.notification(received.notificationId)
        var attempt = 0
        while true {
            attempt += 1
            var effects: [LedgerAppend] = []
            // The notification is kept whatever it says; it changes the ledger only when it is
            // this app's by the same rule as a receipt.
            if let evidence, AppCheck.refusal(of: evidence, bundleId: configuration.bundleId) == nil {
                let context = try await loadContext(evidence: evidence, userId: nil, orderId: nil)
                effects = PurchaseDecider.observe(evidence, source: "notification:\(received.notificationId)", context: context)
                if received.notificationType == "REFUND_REVERSED", let transactionId = received.transactionId {
                    let refund = try await log.read(stream: Streams.refund(transactionId)).map(\.event)
                    if let reversal = PurchaseDecider.reverse(
                        refund, at: signedAtMs ?? received.receivedAtMs, source: "notification:\(received.notificationId)") {
                        effects.append(reversal)
                    }
                }
            }
            do {
                try await log.append(
                    [LedgerAppend(stream: stream, expectation: .noStream, events: [.appleNotificationReceived(received)])] + effects,
                    metadata: metadata, alongside: [document])
                return .recorded(id: received.notificationId)
            } catch EventStoreError.Code.wrongExpectedVersion where attempt < 8 {
                if try await !log.store.read(stream: stream, limit: 1).isEmpty { return .duplicate(id: received.notificationId) }
                continue
            }
        }
    }
}

import AppStore
import EventStore
import Foundation
import Ledger
import LedgerStore
import Logging
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
    /// revocations, renewals, subscription state). A v2 notification's app and environment come
    /// from whichever block names them (`NotificationAddressee`); one that names no transaction
    /// (EXTERNAL_PURCHASE_TOKEN, RESCIND_CONSENT, a summary, a type Apple adds later) is recorded
    /// with its type and decides nothing else. One whose signature and app verify but whose
    /// content cannot be read is kept as evidence and answered `invalidRequest`, never
    /// `unauthenticated` (see `keepUnreadable`).
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
                guard error.code == .unreadablePayload else {
                    throw LedgerServiceError(.unauthenticated, "the signed notification does not verify: \(error.code)")
                }
                return try await keepUnreadable(signedPayload: signedPayload, body: body, because: error, metadata: metadata)
            }
            let payload = verified.payload
            let transaction = verified.transaction?.payload
            signedAtMs = payload.signedDate
            received = AppleNotificationReceived(
                notificationId: payload.notificationUUID ?? DocumentStore.name(of: body), version: "v2",
                notificationType: payload.rawNotificationType ?? "UNKNOWN", subtype: payload.rawSubtype,
                environment: payload.addressee.rawEnvironment,
                transactionId: transaction?.transactionId, originalTransactionId: transaction?.originalTransactionId,
                consumptionRequestReason: payload.data?.rawConsumptionRequestReason, documentSha256: DocumentStore.name(of: body),
                receivedAtMs: clock(), productId: transaction?.productId ?? payload.summary?.productId,
                requestIdentifier: payload.summary?.requestIdentifier, bundleId: payload.addressee.bundleId)
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
            // The secret of the app it names (`bid`), or the first app's: an account's primary
            // secret, which Apple sends for every app, belongs there.
            let named = notification.bundleID.flatMap { configuration.apps.app($0)?.sharedSecret }
            guard [named, configuration.sharedSecret].contains(where: { notification.isAuthentic(sharedSecret: $0 ?? "") }) else {
                throw LedgerServiceError(.unauthenticated, "the v1 notification's password is not our shared secret")
            }
            let name = DocumentStore.name(of: body)
            let transactions = notification.transactions
            received = AppleNotificationReceived(
                notificationId: name, version: "v1", notificationType: notification.notificationType, subtype: nil,
                environment: notification.environment?.rawValue ?? notification.environmentRaw,
                transactionId: transactions.first?.transactionID,
                originalTransactionId: notification.originalTransactionID ?? transactions.first?.originalTransactionID,
                consumptionRequestReason: nil, documentSha256: name, receivedAtMs: clock(), bundleId: notification.bundleID)
            evidence = Evidence(notification: notification)
        }
        return try await mappingDatabaseErrors {
            try await recordNotification(received, body: Array(body), evidence: evidence, signedAtMs: signedAtMs, metadata: metadata)
        }
    }

    /// A v2 notification Apple signed for this app (signature, chain and addressee verified)
    /// whose content, or a payload nested in it, this build cannot read: nothing Apple signs is
    /// lost, so its body is kept with an `AppleNotificationReceived` naming what its envelope
    /// says and why it was not read, on a stream of its own, once. Nothing is decided from it.
    /// It is still answered `invalidRequest` (400, never "does not verify"), so Apple sends it
    /// again and a build that reads it records it in full, with what it decides. Throws always.
    private func keepUnreadable(
        signedPayload: String, body: Data, because unread: AppStoreError, metadata: RequestMetadata
    ) async throws -> NotificationOutcome {
        let refusal = LedgerServiceError(
            .invalidRequest,
            "the notification's signature verifies, but its content is not understood (\(unread.underlying ?? unread.message)); "
                + "it is kept as evidence and nothing was decided from it")
        let envelope: Verified<NotificationEnvelope>
        do throws(AppStoreError) {
            envelope = try await signedData.verifyNotificationEnvelope(signedPayload: signedPayload)
        } catch {
            // Not even an envelope can be read (the payload is no JSON object): nothing names the app.
            guard error.code == .unreadablePayload else {
                throw LedgerServiceError(.unauthenticated, "the signed notification does not verify: \(error.code)")
            }
            logger.error("a signed notification is not a JSON object; not recorded", metadata: ["error": "\(error.debugDescription)"])
            throw refusal
        }
        let name = DocumentStore.name(of: body)
        let said = envelope.payload
        let received = AppleNotificationReceived(
            notificationId: said.notificationUUID ?? name, version: "v2", notificationType: said.rawNotificationType ?? "UNKNOWN",
            subtype: said.rawSubtype, environment: said.addressee.rawEnvironment, transactionId: nil, originalTransactionId: nil,
            consumptionRequestReason: nil, documentSha256: name, receivedAtMs: clock(), unreadable: unread.debugDescription,
            bundleId: said.addressee.bundleId)
        let document = DocumentStore.insert(Array(body), kind: "notification_v2").statement
        try await mappingDatabaseErrors {
            do {
                try await log.append(
                    [LedgerAppend(
                        stream: Streams.unreadableNotification(received.notificationId), expectation: .noStream,
                        events: [.appleNotificationReceived(received)])],
                    metadata: metadata, alongside: [document])
            } catch EventStoreError.Code.wrongExpectedVersion {
                // Kept when Apple first sent it.
            }
        }
        logger.error(
            "a signed notification's content is not understood; kept unread",
            metadata: ["notification_id": "\(received.notificationId)", "type": "\(received.notificationType)", "error": "\(unread.debugDescription)"])
        throw refusal
    }

    /// Records what Apple's answer to a question shows of transactions already in the ledger
    /// (renewals, refunds, subscription state), by the rules a notification's evidence follows,
    /// with the answer's `document` in the same transaction. Evidence for another app changes nothing.
    public func recordObservation(_ evidence: Evidence, source: String, citing document: SQL) async throws {
        guard serves(evidence) else { return }
        let evidence = try await people.recordingTokens(of: evidence)
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

    /// Appends the notification and what it shows, with its `body` in the same transaction,
    /// sealed for the person it concerns (the token it names, or whom its effects name): it
    /// holds their token and transactions (docs/erasure.md).
    private func recordNotification(
        _ received: AppleNotificationReceived, body: [UInt8], evidence: Evidence?, signedAtMs: Int64?, metadata: RequestMetadata
    ) async throws -> NotificationOutcome {
        let stream = Streams.notification(received.notificationId)
        var attempt = 0
        while true {
            attempt += 1
            var effects: [LedgerAppend] = []
            var tokens: [String?] = []
            // The notification is kept whatever it says; it changes the ledger only when it is
            // this app's by the same rule as a receipt.
            if let given = evidence, serves(given) {
                let evidence = try await people.recordingTokens(of: given)
                tokens = evidence.entries.map(\.appAccountToken)
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
            let document = DocumentStore.insert(
                body, kind: "notification_\(received.version)", sealedFor: try await people.documentSeal(naming: effects, tokens: tokens))
            var received = received
            received.documentSha256 = document.name
            do {
                try await log.append(
                    [LedgerAppend(stream: stream, expectation: .noStream, events: [.appleNotificationReceived(received)])] + effects,
                    metadata: metadata, alongside: [document.statement])
                return .recorded(id: received.notificationId)
            } catch EventStoreError.Code.wrongExpectedVersion where attempt < 8 {
                if try await !log.store.read(stream: stream, limit: 1).isEmpty { return .duplicate(id: received.notificationId) }
                continue
            }
        }
    }
}

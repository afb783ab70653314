import AppStore
import AppStoreClient
import Foundation
import Ledger
import LedgerStore

extension PurchaseService {
    /// `POST /v1/subscriptions/{id}/extend`: asks Apple to extend one subscription's renewal
    /// date and records the act (`SubscriptionRenewalExtended`: actor in the metadata, reason,
    /// Apple's request and answer verbatim), extended or refused.
    ///
    /// Once per `requestId`, which is also Apple's `requestIdentifier`: the same request again
    /// answers the first result without asking Apple; other content is `idempotency_conflict`.
    /// Apple that cannot answer (5xx, time-outs, 429 past its waits) records nothing: asking
    /// again with the same request id is safe on both sides. A refusal throws
    /// `extension_refused` with Apple's code, after recording it.
    public func extendRenewal(
        originalTransactionId: String, days: Int64, reason: ExtensionReason, requestId: String, note: String? = nil, metadata: RequestMetadata
    ) async throws -> SubscriptionRenewalExtended {
        guard (1...90).contains(days) else { throw LedgerServiceError(.invalidRequest, "days is 1 to 90 (Apple's limit), not \(days)") }
        guard !requestId.isEmpty, requestId.count <= 128 else { throw LedgerServiceError(.invalidRequest, "request_id is 1 to 128 characters") }
        let key = "renewal-extension:\(requestId)"
        let recorded: SubscriptionRenewalExtended = try await mappingDatabaseErrors {
            try await once(key: key, naming: "request_id \(requestId)", earlier: { event -> SubscriptionRenewalExtended? in
                guard case .subscriptionRenewalExtended(let first) = event, first.originalTransactionId == originalTransactionId,
                      first.days == days, first.reason == reason else { return nil }
                return first
            }) {
                _ = try requireServerAPIClients()
                guard let subscription = try await reads.subscriptionToAct(originalTransactionId) else {
                    throw LedgerServiceError(.notFound, "the ledger holds no subscription \(originalTransactionId)")
                }
                let client = try await requireServerAPI(for: subscription.bundleId)
                // Support's note about the subscriber is theirs: sealed under their key.
                var sealedNote = note
                if let note, let owner = subscription.ownerUserId { sealedNote = try await people.seal(text: note, aboutPersonOf: owner) }
                guard let environment = AppStoreEnvironment(rawValue: subscription.environment), environment == .production || environment == .sandbox else {
                    throw LedgerServiceError(.invalidRequest, "Apple extends only Production and Sandbox subscriptions, not \(subscription.environment)")
                }
                let request = ExtendRenewalDateRequest(extendByDays: Int(days), extendReasonCode: reason.appleCode, requestIdentifier: requestId)
                let requestBody = try JSONEncoder().encode(request)
                var extended: SubscriptionRenewalExtended
                let answerBody: [UInt8]
                do throws(ServerAPIError) {
                    let answer = try await client.extendRenewalDate(request, originalTransactionId: originalTransactionId, environment: environment)
                    guard answer.value.success != false, let effective = answer.value.effectiveDate else {
                        throw ServerAPIError(.malformedAnswer, httpStatus: 200, errorMessage: "Apple's answer names no effectiveDate", attempts: answer.attempts)
                    }
                    answerBody = answer.body
                    extended = SubscriptionRenewalExtended(
                        originalTransactionId: originalTransactionId, productId: subscription.productId, environment: subscription.environment,
                        transactionId: subscription.latestTransactionId, days: days, reason: reason, requestId: requestId, outcome: "extended",
                        effectiveDateMs: effective, appleErrorCode: nil, appleErrorMessage: nil, requestDocumentSha256: "", answerDocumentSha256: "",
                        atMs: clock(), note: sealedNote)
                } catch {
                    // Apple said no (its limits, or the request): an act to record. Anything
                    // else is Apple not answering now: nothing happened, nothing is recorded.
                    guard error.kind == .refused, let body = error.attempts.last?.body else {
                        throw LedgerServiceError(.appleUnavailable, "Apple's Extend a Subscription Renewal Date: \(error)")
                    }
                    answerBody = body
                    extended = SubscriptionRenewalExtended(
                        originalTransactionId: originalTransactionId, productId: subscription.productId, environment: subscription.environment,
                        transactionId: subscription.latestTransactionId, days: days, reason: reason, requestId: requestId, outcome: "refused",
                        effectiveDateMs: nil, appleErrorCode: error.errorCode, appleErrorMessage: error.errorMessage ?? error.httpStatus.map { "HTTP \($0)" },
                        requestDocumentSha256: "", answerDocumentSha256: "", atMs: clock(), note: sealedNote)
                }
                let requestDocument = DocumentStore.insert(Array(requestBody), kind: "apple_extend_request")
                let answerDocument = DocumentStore.insert(answerBody, kind: "apple_extend_answer")
                extended.requestDocumentSha256 = requestDocument.name
                extended.answerDocumentSha256 = answerDocument.name
                try await log.append(
                    [LedgerAppend(stream: Streams.renewalExtension(requestId), expectation: .noStream, events: [.subscriptionRenewalExtended(extended)])],
                    metadata: metadata, alongside: [requestDocument.statement, answerDocument.statement], idempotencyKey: key)
                return extended
            }
        }
        guard recorded.extended else {
            throw LedgerServiceError(
                .extensionRefused,
                "Apple refused to extend \(originalTransactionId): \(recorded.appleErrorCode.map { "error \($0): " } ?? "")\(recorded.appleErrorMessage ?? "no reason given")")
        }
        return recorded
    }
}

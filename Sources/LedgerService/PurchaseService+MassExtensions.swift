import AppStore
import AppStoreClient
import EventStore
import Foundation
import Ledger
import LedgerStore
import Postgres

extension PurchaseService {
    /// `extend-renewals`: asks Apple to extend every active subscription of `productId` (in
    /// `storefronts`, else everywhere) by `days`, and records the request with Apple's answer
    /// (`MassRenewalExtensionRequested`). Apple extends them over time; `followMassExtension`
    /// polls until it says complete. Returns the request id (a new UUID: Apple's
    /// `requestIdentifier`).
    public func requestMassExtension(
        productId: String, days: Int64, reason: ExtensionReason, storefronts: [String]?, environment: AppStoreEnvironment, note: String?,
        metadata: RequestMetadata
    ) async throws -> MassRenewalExtensionRequested {
        guard (1...90).contains(days) else { throw LedgerServiceError(.invalidRequest, "days is 1 to 90 (Apple's limit), not \(days)") }
        let client = try requireServerAPI()
        let catalog = try await mappingDatabaseErrors { try await reads.catalog() }
        guard let product = catalog[productId] else { throw LedgerServiceError(.unknownProduct, "product \(productId) is not in the catalog") }
        guard product.kind == .autoRenewable else { throw LedgerServiceError(.invalidRequest, "\(productId) is not an auto-renewable subscription") }
        let requestId = UUID().uuidString.lowercased()
        let request = MassExtendRenewalDateRequest(
            extendByDays: Int(days), extendReasonCode: reason.appleCode, requestIdentifier: requestId, productId: productId,
            storefrontCountryCodes: storefronts)
        let answer: ServerAPIAnswer<MassExtendRenewalDateResponse>
        do throws(ServerAPIError) {
            answer = try await client.massExtendRenewalDate(request, environment: environment)
        } catch {
            if error.kind == .refused { throw LedgerServiceError(.appleRefused, "Apple refused the mass extension: \(error)") }
            throw LedgerServiceError(.appleUnavailable, "Apple's mass extension: \(error)")
        }
        let requestDocument = DocumentStore.insert(Array(try JSONEncoder().encode(request)), kind: "apple_mass_extend_request")
        let answerDocument = DocumentStore.insert(answer.body, kind: "apple_mass_extend_answer")
        let requested = MassRenewalExtensionRequested(
            requestId: requestId, productId: productId, environment: environment.rawValue, days: days, reason: reason, note: note,
            storefronts: storefronts, requestDocumentSha256: requestDocument.name, answerDocumentSha256: answerDocument.name, atMs: clock())
        try await mappingDatabaseErrors {
            try await log.append(
                [LedgerAppend(stream: Streams.massRenewalExtension(requestId), expectation: .noStream, events: [.massRenewalExtensionRequested(requested)])],
                metadata: metadata, alongside: [requestDocument.statement, answerDocument.statement])
        }
        return requested
    }

    /// Polls Apple's status of a mass extension every `pollEvery` until it says complete (then
    /// records `MassRenewalExtensionCompleted` and returns it) or `timeout` passes (nil). Apple
    /// rate limiting or down on a poll only delays the next one.
    public func followMassExtension(
        _ requested: MassRenewalExtensionRequested, pollEvery: Duration, timeout: Duration, metadata: RequestMetadata,
        progress: (@Sendable (MassExtendRenewalDateStatusResponse) -> Void)? = nil
    ) async throws -> MassRenewalExtensionCompleted? {
        let client = try requireServerAPI()
        let environment = AppStoreEnvironment(rawValue: requested.environment) ?? .production
        let deadline = ContinuousClock.now + timeout
        while true {
            var asked: ServerAPIAnswer<MassExtendRenewalDateStatusResponse>?
            do throws(ServerAPIError) {
                asked = try await client.massExtensionStatus(
                    productId: requested.productId, requestIdentifier: requested.requestId, environment: environment)
            } catch {
                if error.kind == .refused, error.httpStatus == 404 {
                    throw LedgerServiceError(.notFound, "Apple knows no mass extension \(requested.requestId) of \(requested.productId): \(error)")
                }
                // Rate limited or down: the next poll asks again.
            }
            if let status = asked {
                progress?(status.value)
                if status.value.complete == true {
                    let document = DocumentStore.insert(status.body, kind: "apple_mass_extend_status")
                    let completed = MassRenewalExtensionCompleted(
                        requestId: requested.requestId, productId: requested.productId, succeededCount: status.value.succeededCount ?? 0,
                        failedCount: status.value.failedCount ?? 0, completeDateMs: status.value.completeDate, statusDocumentSha256: document.name,
                        atMs: clock())
                    try await recordCompletion(completed, document: document.statement, metadata: metadata)
                    return completed
                }
            }
            guard ContinuousClock.now + pollEvery < deadline else { return nil }
            try await Task.sleep(for: pollEvery)
        }
    }

    private func recordCompletion(_ completed: MassRenewalExtensionCompleted, document: SQL, metadata: RequestMetadata) async throws {
        do {
            try await mappingDatabaseErrors {
                try await log.append(
                    [LedgerAppend(stream: Streams.massRenewalExtension(completed.requestId), expectation: .exactly(1), events: [.massRenewalExtensionCompleted(completed)])],
                    metadata: metadata, alongside: [document])
            }
        } catch EventStoreError.Code.wrongExpectedVersion {
            // Another follower recorded the completion first.
        }
    }
}

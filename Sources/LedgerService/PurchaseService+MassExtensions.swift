import AppStore
import AppStoreClient
import EventStore
import Foundation
import Ledger
import LedgerStore
import Postgres

/// A mass extension Apple has taken: the recorded request, Apple's answer to it (recorded with
/// the completion), and whether this run took over a request an earlier run left unfinished.
public struct MassExtensionAsked: Sendable {
    public var requested: MassRenewalExtensionRequested
    public var answer: [UInt8]
    public var resumed: Bool
}

extension PurchaseService {
    /// `extend-renewals`: asks Apple to extend every active subscription of `productId` (in
    /// `storefronts`, else everywhere) by `days`; `followMassExtension` then polls until Apple
    /// says complete.
    ///
    /// The request (`MassRenewalExtensionRequested`, with a new UUID as Apple's
    /// `requestIdentifier`) is recorded before Apple is asked. A run cut off after that (a
    /// crash, Apple down, the database gone after Apple took it) leaves it unfinished, and the
    /// next run of the same extension sends that same request again, which Apple answers as it
    /// did the first time, and follows it: Apple's limit is two extensions a year, so asking
    /// for a second would spend the subscribers' goodwill twice. Apple refusing the request is
    /// recorded as its completion (`appleErrorCode`) and thrown as `apple_refused`.
    public func requestMassExtension(
        productId: String, days: Int64, reason: ExtensionReason, storefronts: [String]?, environment: AppStoreEnvironment, note: String?,
        bundleId: String? = nil, metadata: RequestMetadata
    ) async throws -> MassExtensionAsked {
        guard (1...90).contains(days) else { throw LedgerServiceError(.invalidRequest, "days is 1 to 90 (Apple's limit), not \(days)") }
        // A product id is one app's, and Apple extends the subscribers of the app asking.
        let app = try app(named: bundleId)
        let client = try await requireServerAPI(for: app)
        let catalog = try await mappingDatabaseErrors { try await reads.catalog(of: app) }
        guard let product = catalog[productId] else { throw LedgerServiceError(.unknownProduct, "product \(productId) is not in the catalog") }
        guard product.kind == .autoRenewable else { throw LedgerServiceError(.invalidRequest, "\(productId) is not an auto-renewable subscription") }
        let unfinished = try await mappingDatabaseErrors {
            try await reads.unfinishedMassExtensions(productId: productId, environment: environment.rawValue).first {
                $0.days == days && $0.reason == reason && $0.storefronts == storefronts && ($0.bundleId ?? app) == app
            }
        }
        let requested: MassRenewalExtensionRequested
        if let unfinished {
            requested = unfinished
        } else {
            let requestId = UUID().uuidString.lowercased()
            let body = Array(try JSONEncoder().encode(MassExtendRenewalDateRequest(
                extendByDays: Int(days), extendReasonCode: reason.appleCode, requestIdentifier: requestId, productId: productId,
                storefrontCountryCodes: storefronts)))
            let requestDocument = DocumentStore.insert(body, kind: "apple_mass_extend_request")
            requested = MassRenewalExtensionRequested(
                requestId: requestId, productId: productId, environment: environment.rawValue, days: days, reason: reason, note: note,
                storefronts: storefronts, requestDocumentSha256: requestDocument.name, answerDocumentSha256: nil, atMs: clock(), bundleId: app)
            try await mappingDatabaseErrors {
                try await log.append(
                    [LedgerAppend(stream: Streams.massRenewalExtension(requestId), expectation: .noStream, events: [.massRenewalExtensionRequested(requested)])],
                    metadata: metadata, alongside: [requestDocument.statement])
            }
        }
        // The recorded request, sent as recorded: the same requestIdentifier every time.
        let request = MassExtendRenewalDateRequest(
            extendByDays: Int(requested.days), extendReasonCode: requested.reason.appleCode, requestIdentifier: requested.requestId,
            productId: requested.productId, storefrontCountryCodes: requested.storefronts)
        do throws(ServerAPIError) {
            let answer = try await client.massExtendRenewalDate(request, environment: environment)
            return MassExtensionAsked(requested: requested, answer: answer.body, resumed: unfinished != nil)
        } catch {
            guard error.kind == .refused, let body = error.attempts.last?.body else {
                throw LedgerServiceError(.appleUnavailable, "Apple's mass extension (request \(requested.requestId) is recorded; run again to send it again): \(error)")
            }
            let answerDocument = DocumentStore.insert(body, kind: "apple_mass_extend_answer")
            let refused = MassRenewalExtensionCompleted(
                requestId: requested.requestId, productId: requested.productId, environment: requested.environment, succeededCount: 0, failedCount: 0, completeDateMs: nil,
                statusDocumentSha256: "", answerDocumentSha256: answerDocument.name, appleErrorCode: error.errorCode ?? Int64(error.httpStatus ?? 0),
                appleErrorMessage: error.errorMessage, atMs: clock())
            try await recordCompletion(refused, documents: [answerDocument.statement], metadata: metadata)
            throw LedgerServiceError(.appleRefused, "Apple refused the mass extension \(requested.requestId): \(error)")
        }
    }

    /// Polls Apple's status of a mass extension every `pollEvery` until it says complete (then
    /// records `MassRenewalExtensionCompleted`, with Apple's answer to the request, and returns
    /// it) or `timeout` passes (nil). Apple rate limiting or down on a poll only delays the next
    /// one.
    public func followMassExtension(
        _ asked: MassExtensionAsked, pollEvery: Duration, timeout: Duration, metadata: RequestMetadata,
        progress: (@Sendable (MassExtendRenewalDateStatusResponse) -> Void)? = nil
    ) async throws -> MassRenewalExtensionCompleted? {
        let requested = asked.requested
        let client = try await requireServerAPI(for: requested.bundleId)
        let environment = AppStoreEnvironment(rawValue: requested.environment) ?? .production
        let deadline = ContinuousClock.now + timeout
        while true {
            var status: ServerAPIAnswer<MassExtendRenewalDateStatusResponse>?
            do throws(ServerAPIError) {
                status = try await client.massExtensionStatus(
                    productId: requested.productId, requestIdentifier: requested.requestId, environment: environment)
            } catch {
                if error.kind == .refused, error.httpStatus == 404 {
                    throw LedgerServiceError(.notFound, "Apple knows no mass extension \(requested.requestId) of \(requested.productId): \(error)")
                }
                // Rate limited or down: the next poll asks again.
            }
            if let status {
                progress?(status.value)
                if status.value.complete == true {
                    let document = DocumentStore.insert(status.body, kind: "apple_mass_extend_status")
                    // Apple's answer to the request, when the request was recorded before asking.
                    let answer = requested.answerDocumentSha256 == nil ? DocumentStore.insert(asked.answer, kind: "apple_mass_extend_answer") : nil
                    let completed = MassRenewalExtensionCompleted(
                        requestId: requested.requestId, productId: requested.productId, environment: requested.environment, succeededCount: status.value.succeededCount ?? 0,
                        failedCount: status.value.failedCount ?? 0, completeDateMs: status.value.completeDate, statusDocumentSha256: document.name,
                        answerDocumentSha256: answer?.name, atMs: clock())
                    try await recordCompletion(completed, documents: [document.statement] + (answer.map { [$0.statement] } ?? []), metadata: metadata)
                    return completed
                }
            }
            guard ContinuousClock.now + pollEvery < deadline else { return nil }
            try await Task.sleep(for: pollEvery)
        }
    }

    private func recordCompletion(_ completed: MassRenewalExtensionCompleted, documents: [SQL], metadata: RequestMetadata) async throws {
        do {
            try await mappingDatabaseErrors {
                try await log.append(
                    [LedgerAppend(stream: Streams.massRenewalExtension(completed.requestId), expectation: .exactly(1), events: [.massRenewalExtensionCompleted(completed)])],
                    metadata: metadata, alongside: documents)
            }
        } catch EventStoreError.Code.wrongExpectedVersion {
            // Another follower recorded the completion first.
        }
    }
}

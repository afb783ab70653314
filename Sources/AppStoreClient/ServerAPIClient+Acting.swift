import AppStore
import Foundation

/// The calls that ask Apple to *do* something (docs/support-acts.md). A refusal is Apple's
/// `ServerAPIError` of kind `.refused`, its `errorCode` Apple's (4030004 ineligible, ...).
extension ServerAPIClient {
    /// Extend a Subscription Renewal Date.
    public func extendRenewalDate(
        _ request: ExtendRenewalDateRequest, originalTransactionId: String, environment: AppStoreEnvironment
    ) async throws(ServerAPIError) -> ServerAPIAnswer<ExtendRenewalDateResponse> {
        try await call(.PUT, "/inApps/v1/subscriptions/extend/\(Self.segment(originalTransactionId))", body: try Self.encode(request), environment: environment)
    }

    /// Extend Subscription Renewal Dates for All Active Subscribers (mass).
    public func massExtendRenewalDate(
        _ request: MassExtendRenewalDateRequest, environment: AppStoreEnvironment
    ) async throws(ServerAPIError) -> ServerAPIAnswer<MassExtendRenewalDateResponse> {
        // One URL serving both environments (the simulator through APPLE_SERVER_API_URL) is told
        // which one; Apple's two hosts are not.
        let query = configuration.productionURL == configuration.sandboxURL ? [("environment", environment.rawValue)] : []
        return try await call(.POST, "/inApps/v1/subscriptions/extend/mass", query: query, body: try Self.encode(request), environment: environment)
    }

    /// Get Status of Subscription Renewal Date Extensions.
    public func massExtensionStatus(
        productId: String, requestIdentifier: String, environment: AppStoreEnvironment
    ) async throws(ServerAPIError) -> ServerAPIAnswer<MassExtendRenewalDateStatusResponse> {
        try await call(
            .GET, "/inApps/v1/subscriptions/extend/mass/\(Self.segment(productId))/\(Self.segment(requestIdentifier))", environment: environment)
    }

    /// Set App Account Token: Apple answers 200 with no body.
    public func setAppAccountToken(
        _ token: UUID, originalTransactionId: String, environment: AppStoreEnvironment
    ) async throws(ServerAPIError) -> ServerAPIAnswer<Empty> {
        let request = UpdateAppAccountTokenRequest(appAccountToken: token.uuidString.lowercased())
        return try await call(
            .PUT, "/inApps/v1/transactions/\(Self.segment(originalTransactionId))/appAccountToken", body: try Self.encode(request), environment: environment)
    }

    /// Finish Transaction (API 1.20): Apple answers 200 with no body.
    public func finishTransaction(_ transactionId: String, environment: AppStoreEnvironment) async throws(ServerAPIError) -> ServerAPIAnswer<Empty> {
        try await call(.POST, "/inApps/v1/transactions/\(Self.segment(transactionId))/finish", environment: environment)
    }

    static func encode(_ value: some Encodable) throws(ServerAPIError) -> Data {
        do { return try JSONEncoder().encode(value) } catch { throw ServerAPIError(.malformedAnswer, errorMessage: "the request did not encode") }
    }
}

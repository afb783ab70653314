/// One renewal-date extension the simulator granted: an Extend a Subscription Renewal Date
/// call, or one subscription's share of a mass extension. What Apple's answer says, and when.
///
/// Times are milliseconds since 1970 (UTC) on the simulated clock.
/// See https://developer.apple.com/documentation/appstoreserverapi/extendrenewaldateresponse
public struct RenewalExtension: Sendable, Codable, Hashable {
    public var originalTransactionId: String
    /// The period extended: its transaction's `webOrderLineItemId`.
    public var webOrderLineItemId: String?
    /// The client's `requestIdentifier` (the mass request's, for a mass extension).
    public var requestIdentifier: String
    /// Days added, 1...90.
    public var extendByDays: Int
    /// Apple's `extendReasonCode`: 0 undeclared, 1 customer satisfaction, 2 other, 3 service
    /// issue or outage.
    public var extendReasonCode: Int
    /// The period's new end: Apple's `effectiveDate`.
    public var effectiveDateMs: Int64
    /// When it was granted.
    public var grantedAtMs: Int64
    /// The product of the mass extension that granted it; nil for a single extension.
    public var massExtensionProductId: String?
}

/// One Extend Subscription Renewal Dates for All Active Subscribers request and how it went.
///
/// It runs once, later than asked (see `AppleSimulator.Configuration.massExtensionIncompleteStatusCalls`),
/// as Apple's may take hours. Times are milliseconds since 1970 (UTC) on the simulated clock.
/// See https://developer.apple.com/documentation/appstoreserverapi/massextendrenewaldatestatusresponse
public struct MassRenewalExtension: Sendable, Codable, Hashable {
    public var requestIdentifier: String
    /// The app whose key asked (the token's `bid`): it covers that app's subscriptions only,
    /// and only that app may ask its status.
    public var bundleId: String
    public var productId: String
    public var extendByDays: Int
    public var extendReasonCode: Int
    /// The storefronts (ISO 3166-1 alpha-3) it is limited to; nil: every storefront.
    public var storefrontCountryCodes: [String]?
    /// The environment whose subscriptions it extends (the simulator serves both on one URL).
    public var environment: SimulatedEnvironment
    public var requestedAtMs: Int64
    /// Get Status of Subscription Renewal Date Extensions calls answered so far; calls an
    /// injected failure answered are not counted.
    public var statusCalls: Int
    /// When it ran (Apple's `completeDate`); nil while pending.
    public var completeDateMs: Int64?
    /// Subscriptions extended.
    public var succeededCount: Int
    /// Subscriptions of the product it could not extend (free trial, billing retry, expired,
    /// or already extended twice in 365 days).
    public var failedCount: Int

    public var isComplete: Bool { completeDateMs != nil }
}

/// What the simulator remembers of renewal-date extensions: every one granted (to answer a
/// repeated `requestIdentifier` as the first time, and to count two a year) and every mass
/// request.
struct RenewalExtensionRecords: Sendable {
    /// Every extension granted, oldest first.
    var granted: [RenewalExtension] = []
    /// Mass extension requests, in the order made.
    var massExtensions: [MassRenewalExtension] = []

    /// The extension `requestIdentifier` already granted to the subscription, if any.
    func grantedExtension(_ originalTransactionId: String, requestIdentifier: String) -> RenewalExtension? {
        granted.first { $0.originalTransactionId == originalTransactionId && $0.requestIdentifier == requestIdentifier }
    }

    /// Extensions the subscription was granted after `sinceMs`.
    func count(of originalTransactionId: String, grantedAfter sinceMs: Int64) -> Int {
        granted.count(where: { $0.originalTransactionId == originalTransactionId && $0.grantedAtMs > sinceMs })
    }

    /// Where the mass request for `productId` with `requestIdentifier` is in `massExtensions`.
    func massIndex(productId: String, requestIdentifier: String) -> Int? {
        massExtensions.firstIndex { $0.productId == productId && $0.requestIdentifier == requestIdentifier }
    }
}

/// What the ledger asks Apple to *do* (docs/support-acts.md), in the App Store Server API's shapes
/// (app-store-server-library-swift's Models: ExtendRenewalDateRequest, ExtendRenewalDateResponse,
/// MassExtendRenewalDateRequest, MassExtendRenewalDateResponse, MassExtendRenewalDateStatusResponse,
/// UpdateAppAccountTokenRequest).

/// `PUT /inApps/v1/subscriptions/extend/{originalTransactionId}`.
public struct ExtendRenewalDateRequest: Hashable, Sendable, Codable {
    /// 1…90.
    public var extendByDays: Int
    /// 0 undeclared, 1 customer satisfaction, 2 other, 3 service issue or outage.
    public var extendReasonCode: Int
    /// Apple's idempotency key (≤ 128 characters): the same again extends once.
    public var requestIdentifier: String

    public init(extendByDays: Int, extendReasonCode: Int, requestIdentifier: String) {
        self.extendByDays = extendByDays
        self.extendReasonCode = extendReasonCode
        self.requestIdentifier = requestIdentifier
    }
}

public struct ExtendRenewalDateResponse: Hashable, Sendable, Codable {
    public var originalTransactionId: String?
    public var webOrderLineItemId: String?
    public var success: Bool?
    /// The new renewal date (milliseconds since 1970, UTC).
    public var effectiveDate: Int64?
}

/// `POST /inApps/v1/subscriptions/extend/mass`.
public struct MassExtendRenewalDateRequest: Hashable, Sendable, Codable {
    public var extendByDays: Int
    public var extendReasonCode: Int
    public var requestIdentifier: String
    public var productId: String
    /// ISO 3166-1 alpha-3; nil: every storefront.
    public var storefrontCountryCodes: [String]?

    public init(extendByDays: Int, extendReasonCode: Int, requestIdentifier: String, productId: String, storefrontCountryCodes: [String]?) {
        self.extendByDays = extendByDays
        self.extendReasonCode = extendReasonCode
        self.requestIdentifier = requestIdentifier
        self.productId = productId
        self.storefrontCountryCodes = storefrontCountryCodes
    }
}

public struct MassExtendRenewalDateResponse: Hashable, Sendable, Codable {
    public var requestIdentifier: String?
}

/// `GET /inApps/v1/subscriptions/extend/mass/{productId}/{requestIdentifier}`.
public struct MassExtendRenewalDateStatusResponse: Hashable, Sendable, Codable {
    public var requestIdentifier: String?
    public var complete: Bool?
    public var completeDate: Int64?
    public var succeededCount: Int64?
    public var failedCount: Int64?
}

/// `PUT /inApps/v1/transactions/{originalTransactionId}/appAccountToken`.
public struct UpdateAppAccountTokenRequest: Hashable, Sendable, Codable {
    public var appAccountToken: String

    public init(appAccountToken: String) {
        self.appAccountToken = appAccountToken
    }
}

/// App Store Server API bodies the ledger reads when it reconciles with Apple. Signed entries stay
/// JWS strings here; verify them with `SignedDataVerifier.verifyTransaction(_:)`.

/// One page of Get Transaction History or Get Refund History.
/// https://developer.apple.com/documentation/appstoreserverapi/historyresponse
/// https://developer.apple.com/documentation/appstoreserverapi/refundhistoryresponse
public struct SignedTransactionPage: Hashable, Sendable, Codable {
    /// The token to ask for the next page with.
    public var revision: String?
    /// True when more pages follow.
    public var hasMore: Bool?
    public var bundleId: String?
    public var appAppleId: Int64?
    public var rawEnvironment: String?
    /// Signed transactions (JWS), oldest first as Apple pages them.
    public var signedTransactions: [String]

    public var environment: AppStoreEnvironment? { rawEnvironment.flatMap(AppStoreEnvironment.init(appleValue:)) }

    enum CodingKeys: String, CodingKey {
        case revision, hasMore, bundleId, appAppleId, rawEnvironment = "environment", signedTransactions
    }
}

/// Get All Subscription Statuses: the latest transaction of each subscription, per group.
/// https://developer.apple.com/documentation/appstoreserverapi/statusresponse
public struct SubscriptionStatusesResponse: Hashable, Sendable, Codable {
    public var rawEnvironment: String?
    public var bundleId: String?
    public var appAppleId: Int64?
    public var data: [Group]

    /// https://developer.apple.com/documentation/appstoreserverapi/subscriptiongroupidentifieritem
    public struct Group: Hashable, Sendable, Codable {
        public var subscriptionGroupIdentifier: String?
        public var lastTransactions: [LastTransaction]
    }

    /// https://developer.apple.com/documentation/appstoreserverapi/lasttransactionsitem
    public struct LastTransaction: Hashable, Sendable, Codable {
        public var rawStatus: Int?
        public var originalTransactionId: String?
        public var signedTransactionInfo: String?
        public var signedRenewalInfo: String?

        public var status: SubscriptionStatus? { rawStatus.flatMap(SubscriptionStatus.init(rawValue:)) }

        enum CodingKeys: String, CodingKey {
            case rawStatus = "status", originalTransactionId, signedTransactionInfo, signedRenewalInfo
        }
    }

    enum CodingKeys: String, CodingKey {
        case rawEnvironment = "environment", bundleId, appAppleId, data
    }
}

/// The error body of the App Store Server API.
/// https://developer.apple.com/documentation/appstoreserverapi/error_codes
public struct ServerAPIErrorBody: Hashable, Sendable, Codable {
    /// Apple's numeric code, e.g. 4040010 (transaction id not found), 4290000 (rate limit).
    public var errorCode: Int64
    public var errorMessage: String?

    /// True for rate limiting (429xxxx) and Apple's retryable internal errors (5000001 and up,
    /// in the 5xxxxxx range); 4xxxxxx codes are about the request and will not change.
    public var isRetryable: Bool {
        (4_290_000..<4_300_000).contains(errorCode) || (5_000_001..<6_000_000).contains(errorCode)
    }
}

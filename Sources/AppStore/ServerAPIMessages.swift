/// App Store Server API bodies beside `ServerAPIResponses.swift`: order look-up, notification
/// history, transaction info, test notifications, and the consumption answer the ledger sends.
/// Signed entries stay JWS strings; verify them with `SignedDataVerifier` before they count.

/// Get Transaction Info.
/// https://developer.apple.com/documentation/appstoreserverapi/transactioninforesponse
public struct TransactionInfoResponse: Hashable, Sendable, Codable {
    public var signedTransactionInfo: String?
}

/// Look Up Order ID: `status` 0 with the order's transactions, 1 when Apple knows no such order.
/// https://developer.apple.com/documentation/appstoreserverapi/orderlookupresponse
public struct OrderLookupResponse: Hashable, Sendable, Codable {
    public var status: Int
    public var signedTransactions: [String]

    public init(status: Int, signedTransactions: [String]) {
        self.status = status
        self.signedTransactions = signedTransactions
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        status = try c.decode(Int.self, forKey: .status)
        signedTransactions = try c.decodeIfPresent([String].self, forKey: .signedTransactions) ?? []
    }
}

/// Get Notification History's request body. Dates are milliseconds since 1970, UTC.
/// https://developer.apple.com/documentation/appstoreserverapi/notificationhistoryrequest
public struct NotificationHistoryRequest: Hashable, Sendable, Codable {
    public var startDate: Int64
    public var endDate: Int64
    public var notificationType: String?
    public var notificationSubtype: String?
    public var transactionId: String?
    public var onlyFailures: Bool?

    public init(startDate: Int64, endDate: Int64, notificationType: String? = nil, notificationSubtype: String? = nil,
                transactionId: String? = nil, onlyFailures: Bool? = nil) {
        self.startDate = startDate
        self.endDate = endDate
        self.notificationType = notificationType
        self.notificationSubtype = notificationSubtype
        self.transactionId = transactionId
        self.onlyFailures = onlyFailures
    }
}

/// One page of Get Notification History.
/// https://developer.apple.com/documentation/appstoreserverapi/notificationhistoryresponse
public struct NotificationHistoryResponse: Hashable, Sendable, Codable {
    public var notificationHistory: [Item]
    public var hasMore: Bool?
    /// The token to ask for the next page with.
    public var paginationToken: String?

    public struct Item: Hashable, Sendable, Codable {
        /// The notification as Apple signed it: the same `signedPayload` it posts.
        public var signedPayload: String
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        notificationHistory = try c.decodeIfPresent([Item].self, forKey: .notificationHistory) ?? []
        hasMore = try c.decodeIfPresent(Bool.self, forKey: .hasMore)
        paginationToken = try c.decodeIfPresent(String.self, forKey: .paginationToken)
    }
}

/// Request a Test Notification.
public struct TestNotificationResponse: Hashable, Sendable, Codable {
    public var testNotificationToken: String?
}

/// Send Consumption Information's body (v2, `PUT /inApps/v2/transactions/consumption/{id}`).
/// https://developer.apple.com/documentation/appstoreserverapi/consumptionrequest
public struct ConsumptionRequest: Hashable, Sendable, Codable {
    /// Apple refuses the request unless the customer consented.
    public var customerConsented: Bool
    /// How much was used, in milliunits (100000 = all); not for auto-renewable subscriptions.
    public var consumptionPercentage: Int64?
    /// `DELIVERED`, or why not: `UNDELIVERED_QUALITY_ISSUE`, `UNDELIVERED_WRONG_ITEM`,
    /// `UNDELIVERED_SERVER_OUTAGE`, `UNDELIVERED_OTHER`.
    public var deliveryStatus: String
    /// `DECLINE`, `GRANT_FULL`, `GRANT_PRORATED`; omitted for no preference.
    public var refundPreference: String?
    public var sampleContentProvided: Bool

    public init(customerConsented: Bool, consumptionPercentage: Int64?, deliveryStatus: String, refundPreference: String?, sampleContentProvided: Bool) {
        self.customerConsented = customerConsented
        self.consumptionPercentage = consumptionPercentage
        self.deliveryStatus = deliveryStatus
        self.refundPreference = refundPreference
        self.sampleContentProvided = sampleContentProvided
    }
}

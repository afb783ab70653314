/// The JSON bodies of the App Store Server API, field for field as Apple's (camelCase, as
/// declared). Signed items are JWS strings from the simulator's CA.
enum ServerAPIBody {
    /// Get Transaction Info.
    /// https://developer.apple.com/documentation/appstoreserverapi/transactioninforesponse
    struct TransactionInfo: Encodable {
        var signedTransactionInfo: String
    }

    /// Get Transaction History (v2), one page.
    /// https://developer.apple.com/documentation/appstoreserverapi/historyresponse
    struct History: Encodable {
        var revision: String
        var hasMore: Bool
        var bundleId: String
        var appAppleId: Int64
        var environment: String
        var signedTransactions: [String]
    }

    /// Get All Subscription Statuses.
    /// https://developer.apple.com/documentation/appstoreserverapi/statusresponse
    struct Statuses: Encodable {
        var environment: String
        var bundleId: String
        var appAppleId: Int64
        var data: [Group]

        struct Group: Encodable {
            var subscriptionGroupIdentifier: String
            var lastTransactions: [LastTransaction]
        }

        struct LastTransaction: Encodable {
            var originalTransactionId: String
            /// 1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked.
            var status: Int
            var signedTransactionInfo: String
            var signedRenewalInfo: String
        }
    }

    /// Get Refund History (v2), one page.
    /// https://developer.apple.com/documentation/appstoreserverapi/refundhistoryresponse
    struct RefundHistory: Encodable {
        var signedTransactions: [String]
        var revision: String
        var hasMore: Bool
    }

    /// Look Up Order ID: `status` 0 with the order's transactions, or 1 (invalid order id) alone.
    /// https://developer.apple.com/documentation/appstoreserverapi/orderlookupresponse
    struct OrderLookup: Encodable {
        var status: Int
        var signedTransactions: [String]?
    }

    /// Get Notification History, one page; `paginationToken` only when `hasMore`.
    /// https://developer.apple.com/documentation/appstoreserverapi/notificationhistoryresponse
    struct NotificationHistory: Encodable {
        var notificationHistory: [Item]
        var hasMore: Bool
        var paginationToken: String?

        struct Item: Encodable {
            var signedPayload: String
            var sendAttempts: [SendAttempt]
        }
    }

    /// One attempt to post a notification: `attemptDate` in milliseconds since 1970 (UTC).
    /// https://developer.apple.com/documentation/appstoreserverapi/sendattemptitem
    struct SendAttempt: Encodable {
        var attemptDate: Int64
        var sendAttemptResult: String
    }

    /// Request a Test Notification.
    /// https://developer.apple.com/documentation/appstoreserverapi/sendtestnotificationresponse
    struct TestNotification: Encodable {
        var testNotificationToken: String
    }

    /// Get Test Notification Status.
    /// https://developer.apple.com/documentation/appstoreserverapi/checktestnotificationresponse
    struct TestNotificationStatus: Encodable {
        var signedPayload: String
        var sendAttempts: [SendAttempt]
    }

    /// Every error answer but 401's (which has no body).
    /// https://developer.apple.com/documentation/appstoreserverapi/error-codes
    struct ErrorBody: Encodable {
        var errorCode: Int64
        var errorMessage: String
    }

    /// The body of Get Notification History. Dates are milliseconds since 1970 (UTC), read as
    /// numbers of any JSON spelling (Apple's own library sends them as doubles).
    /// https://developer.apple.com/documentation/appstoreserverapi/notificationhistoryrequest
    struct NotificationHistoryRequest: Decodable {
        var startDate: Double?
        var endDate: Double?
        var notificationType: String?
        var notificationSubtype: String?
        var transactionId: String?
        var onlyFailures: Bool?
    }
}

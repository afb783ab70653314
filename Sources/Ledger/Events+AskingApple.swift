/// What the ledger learnt by asking Apple (the App Store Server API) and what it told Apple:
/// evidence like any other, its bodies kept verbatim as documents (docs/architecture.md §8).

/// One pass over Apple's notification history for an environment, up to `toMs`: the next
/// pass starts from here, so a restart resumes. The notifications themselves are recorded as
/// `AppleNotificationReceived` by the same rule as when Apple posts them (once per UUID).
public struct ReconciliationCompleted: LedgerEventPayload {
    public static let eventType = "ReconciliationCompleted"
    /// `Production` or `Sandbox`.
    public var environment: String
    /// The window asked for, milliseconds since 1970, UTC.
    public var fromMs: Int64
    public var toMs: Int64
    /// Notifications Apple listed, and of those, how many the ledger had not recorded before.
    public var notificationsSeen: Int
    public var notificationsRecorded: Int
    /// sha256 (hex) of every history page's body, in order.
    public var documentSha256List: [String]
    /// The app whose history it read; nil when recorded before events named their app.
    public var bundleId: String?

    public init(
        environment: String, fromMs: Int64, toMs: Int64, notificationsSeen: Int, notificationsRecorded: Int, documentSha256List: [String],
        bundleId: String? = nil
    ) {
        self.environment = environment
        self.fromMs = fromMs
        self.toMs = toMs
        self.notificationsSeen = notificationsSeen
        self.notificationsRecorded = notificationsRecorded
        self.documentSha256List = documentSha256List
        self.bundleId = bundleId
    }
}

/// The ledger answered a CONSUMPTION_REQUEST: what it told Apple, and that Apple took it.
public struct ConsumptionInformationSent: LedgerEventPayload {
    public static let eventType = "ConsumptionInformationSent"
    /// The `AppleNotificationReceived` (CONSUMPTION_REQUEST) this answers.
    public var notificationId: String
    public var transactionId: String
    public var userId: String
    /// Milliunits (100000 = all of it), when sent.
    public var consumptionPercentage: Int64?
    public var deliveryStatus: String
    public var refundPreference: String?
    public var sampleContentProvided: Bool
    /// sha256 (hex) of the request body exactly as sent.
    public var documentSha256: String
    /// Apple's HTTP status (202).
    public var httpStatus: Int
    /// Milliseconds since 1970, UTC.
    public var sentAtMs: Int64

    public init(
        notificationId: String, transactionId: String, userId: String, consumptionPercentage: Int64?, deliveryStatus: String,
        refundPreference: String?, sampleContentProvided: Bool, documentSha256: String, httpStatus: Int, sentAtMs: Int64
    ) {
        self.notificationId = notificationId
        self.transactionId = transactionId
        self.userId = userId
        self.consumptionPercentage = consumptionPercentage
        self.deliveryStatus = deliveryStatus
        self.refundPreference = refundPreference
        self.sampleContentProvided = sampleContentProvided
        self.documentSha256 = documentSha256
        self.httpStatus = httpStatus
        self.sentAtMs = sentAtMs
    }
}

/// The ledger did not answer a CONSUMPTION_REQUEST, and why: `no_consent` (the user never
/// agreed that consumption data may be sent), `unknown_transaction` (the ledger never delivered
/// it), `refused_by_apple` (Apple refused the answer as sent).
public struct ConsumptionInformationWithheld: LedgerEventPayload {
    public static let eventType = "ConsumptionInformationWithheld"
    public var notificationId: String
    public var transactionId: String?
    public var userId: String?
    public var reason: String
    /// Apple's `errorCode` when it refused.
    public var appleErrorCode: Int64?
    /// Milliseconds since 1970, UTC.
    public var atMs: Int64

    public init(notificationId: String, transactionId: String?, userId: String?, reason: String, appleErrorCode: Int64? = nil, atMs: Int64) {
        self.notificationId = notificationId
        self.transactionId = transactionId
        self.userId = userId
        self.reason = reason
        self.appleErrorCode = appleErrorCode
        self.atMs = atMs
    }
}

/// Apple's Look Up Order ID answered for an order id from a customer's receipt e-mail.
public struct AppleOrderLookedUp: LedgerEventPayload {
    public static let eventType = "AppleOrderLookedUp"
    public var orderId: String
    public var environment: String
    /// The order's transactions, as Apple signed them (verified before recording).
    public var transactionIds: [String]
    /// sha256 (hex) of Apple's answer.
    public var documentSha256: String
    public var atMs: Int64

    public init(orderId: String, environment: String, transactionIds: [String], documentSha256: String, atMs: Int64) {
        self.orderId = orderId
        self.environment = environment
        self.transactionIds = transactionIds
        self.documentSha256 = documentSha256
        self.atMs = atMs
    }
}

/// The App Store Server API's transaction history of an Apple account, read for a restore:
/// every page's body is a document, and every signed transaction in them was verified.
public struct TransactionHistoryRead: LedgerEventPayload {
    public static let eventType = "TransactionHistoryRead"
    public var submissionId: String
    public var environment: String
    /// The transaction the history was asked for.
    public var transactionId: String
    public var transactionCount: Int
    /// sha256 (hex) of every page's body, in order.
    public var documentSha256List: [String]

    public init(submissionId: String, environment: String, transactionId: String, transactionCount: Int, documentSha256List: [String]) {
        self.submissionId = submissionId
        self.environment = environment
        self.transactionId = transactionId
        self.transactionCount = transactionCount
        self.documentSha256List = documentSha256List
    }
}

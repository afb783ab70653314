/// Stream ids of the ledger's aggregates. A stream per Apple transaction, claimed expecting no
/// stream, is what makes delivery exactly-once in the database rather than by check-then-insert.
public enum Streams {
    public static let catalog = "catalog"
    /// The apps served, as configured over time (`AppsConfigured`).
    public static let apps = "apps"
    public static func order(_ id: String) -> String { "order-\(id)" }
    public static func submission(_ id: String) -> String { "submission-\(id)" }
    /// Holds the one `PurchaseDelivered` or `SubscriptionRenewalSeen` of an Apple transaction.
    public static func transaction(_ id: String) -> String { "transaction-\(id)" }
    public static func ownership(_ originalTransactionId: String) -> String { "ownership-\(originalTransactionId)" }
    public static func refund(_ transactionId: String) -> String { "refund-\(transactionId)" }
    /// Holds the one `TransactionInfoRecorded` of an Apple transaction, claimed expecting no
    /// stream: Apple's Get Transaction Info is asked, and its answer recorded, once.
    public static func transactionInfo(_ transactionId: String) -> String { "transaction-info-\(transactionId)" }
    public static func notification(_ id: String) -> String { "notification-\(id)" }
    /// A notification kept unread (`AppleNotificationReceived.unreadable`): apart from
    /// `notification(_:)`, so that the same notification read later is recorded in full.
    public static func unreadableNotification(_ id: String) -> String { "unreadable-notification-\(id)" }
    public static func subscription(_ originalTransactionId: String) -> String { "subscription-\(originalTransactionId)" }
    /// A user's spends of one unit. The unit's length goes first, so no user id and unit pair
    /// can spell another's stream.
    public static func wallet(userId: String, unit: String) -> String { "wallet-\(unit.utf8.count):\(unit):\(person(userId))" }
    /// The ledger's answer to one CONSUMPTION_REQUEST, claimed expecting no stream: answered once.
    public static func consumptionAnswer(notificationId: String) -> String { consumptionAnswerPrefix + notificationId }
    /// The prefix of `consumptionAnswer(notificationId:)`, for SQL that joins a notification to
    /// its answer's stream (`prefix || notification_id`).
    public static let consumptionAnswerPrefix = "consumption-"
    /// What Apple said when asked about one order id (Look Up Order ID).
    public static func appleOrder(_ orderId: String) -> String { "apple-order-\(orderId)" }
    /// The reconciliation passes over Apple's notification history of one environment.
    public static func reconciliation(environment: String) -> String { "reconciliation-\(environment)" }
    /// A user's consents to sending consumption data to Apple.
    public static func consent(userId: String) -> String { "consent-\(person(userId))" }
    /// Where sealing people began (`ErasureBegan`): claimed expecting no stream, so it begins once.
    public static let erasure = "erasure"
    /// A subject's erasure (`UserErased`), claimed expecting no stream: a person is erased once.
    public static func erasure(subject: String) -> String { "erasure-\(subject)" }
    /// How a user is named in streams and keys: a handle (a person's id sealed under their own
    /// key, docs/erasure.md) by its `~1.<subject>` part, which is theirs alone and short enough
    /// for the 512 characters a stream id may have whatever the id's length; any other id (one
    /// recorded before erasure came) as it is, so its streams go on.
    public static func person(_ userId: String) -> String {
        let bytes = userId.utf8
        guard bytes.count > 31, userId.hasPrefix("~1.s"), bytes[bytes.index(bytes.startIndex, offsetBy: 30)] == UInt8(ascii: ".") else {
            return userId
        }
        return String(decoding: bytes.prefix(30), as: UTF8.self)
    }
    /// One per App Store Connect report file, named by its sha256.
    public static func appStoreReport(_ sha256: String) -> String { "app-store-report-\(sha256)" }
    /// Every price-point refresh of one product, appended expecting any version: the latest at
    /// or before a sale is the table in force when it was made.
    public static func pricePoints(_ productId: String) -> String { "price-points-\(productId)" }
    /// One extension request (Extend a Subscription Renewal Date), claimed expecting no stream:
    /// the request id is Apple's idempotency key and the ledger's.
    public static func renewalExtension(_ requestId: String) -> String { "renewal-extension-\(requestId)" }
    /// Every Set App Account Token asked for one original transaction, in order.
    public static func appAccountToken(_ originalTransactionId: String) -> String { "app-account-token-\(originalTransactionId)" }
    /// The one Finish Transaction of a delivered transaction, claimed expecting no stream.
    public static func transactionFinished(_ transactionId: String) -> String { "transaction-finished-\(transactionId)" }
    /// One offer signature the ledger issued.
    public static func offerSignature(_ signatureId: String) -> String { "offer-signature-\(signatureId)" }
    /// One mass extension: its request, then its completion.
    public static func massRenewalExtension(_ requestId: String) -> String { "mass-renewal-extension-\(requestId)" }
}

/// The names of a user's streams and keys within one app (docs/several-apps.md): the log's
/// legacy app keeps the names they had before several apps, so its spends and retries go on at
/// the same streams and keys across the upgrade; every other app's take the bundle id, separated
/// by spaces, which neither a bundle id nor a user id may hold, so no two names can meet.
public struct AppStreams: Sendable, Hashable {
    public let bundleId: String
    /// Whether `bundleId` is the log's legacy app (or the log names none yet).
    public let isLegacy: Bool

    /// `legacyApp` nil: the log names no app yet, so this one is its legacy app.
    public init(bundleId: String, legacyApp: String?) {
        self.bundleId = bundleId
        isLegacy = bundleId == (legacyApp ?? bundleId)
    }

    /// A user's spends of one unit in this app.
    public func wallet(userId: String, unit: String) -> String {
        isLegacy ? Streams.wallet(userId: userId, unit: unit) : "wallet \(bundleId) \(unit.utf8.count):\(unit):\(Streams.person(userId))"
    }

    /// A user's consents in this app.
    public func consent(userId: String) -> String {
        isLegacy ? Streams.consent(userId: userId) : "consent \(bundleId) \(Streams.person(userId))"
    }

    /// Where reconciliation with this app's notification history stands in one environment:
    /// Apple keeps a history per app.
    public func reconciliation(environment: String) -> String {
        isLegacy ? Streams.reconciliation(environment: environment) : "reconciliation \(bundleId) \(environment)"
    }

    /// Apple's price points of one of this app's products.
    public func pricePoints(productId: String) -> String {
        isLegacy ? Streams.pricePoints(productId) : "price-points \(bundleId) \(productId)"
    }

    /// A spend's idempotency key.
    public func spendKey(userId: String, spendId: String) -> String {
        let user = Streams.person(userId)
        return isLegacy ? "spend:\(user.utf8.count):\(user):\(spendId)" : "spend \(bundleId) \(user.utf8.count):\(user):\(spendId)"
    }
}

/// Apple told us something (App Store Server Notification): kept verbatim as a document, once
/// per v2 `notificationUUID`, once per body hash for v1 (which has no id). Every type is kept,
/// with Apple's raw type and subtype, including those that name no transaction
/// (EXTERNAL_PURCHASE_TOKEN, RESCIND_CONSENT, a RENEWAL_EXTENSION summary, TEST, a type Apple
/// adds later): those decide nothing else.
///
/// A v2 notification whose signature and app verified but whose content this build could not
/// read is kept too, with `unreadable` saying why, on a stream of its own
/// (`Streams.unreadableNotification`): nothing is decided from it, and when Apple sends it again
/// a build that reads it records it in full.
public struct AppleNotificationReceived: LedgerEventPayload {
    public static let eventType = "AppleNotificationReceived"
    public var notificationId: String
    /// `v1` or `v2`.
    public var version: String
    public var notificationType: String
    public var subtype: String?
    public var environment: String?
    public var transactionId: String?
    public var originalTransactionId: String?
    public var consumptionRequestReason: String?
    /// sha256 (hex) of the body as posted.
    public var documentSha256: String
    public var receivedAtMs: Int64
    /// Why the content could not be read (a field of another type; no value quoted); nil when
    /// it was read in full. Absent from events recorded before it existed.
    public var unreadable: String?
    /// The product the notification is about (its transaction's, or a mass extension summary's),
    /// and the mass extension's request id of a summary: how a subscription's timeline finds the
    /// mass extensions of its product. Absent from events recorded before they existed.
    public var productId: String?
    public var requestIdentifier: String?

    /// The app the signed payload names (`data.bundleId`, v1 `bid`); absent when it names none, and in events recorded before several apps.
    public var bundleId: String?

    public init(
        notificationId: String, version: String, notificationType: String, subtype: String?, environment: String?,
        transactionId: String?, originalTransactionId: String?, consumptionRequestReason: String?, documentSha256: String, receivedAtMs: Int64,
        unreadable: String? = nil, productId: String? = nil, requestIdentifier: String? = nil, bundleId: String? = nil
    ) {
        self.bundleId = bundleId
        self.notificationId = notificationId
        self.version = version
        self.notificationType = notificationType
        self.subtype = subtype
        self.environment = environment
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.consumptionRequestReason = consumptionRequestReason
        self.documentSha256 = documentSha256
        self.receivedAtMs = receivedAtMs
        self.unreadable = unreadable
        self.productId = productId
        self.requestIdentifier = requestIdentifier
    }
}

/// What Apple showed about one subscription at one moment: its transactions (from `in_app`,
/// `latest_receipt_info`, signed transactions) and its renewal information. The subscriptions
/// projection merges every observation, so their order does not matter.
public struct SubscriptionObserved: LedgerEventPayload {
    public static let eventType = "SubscriptionObserved"
    public var originalTransactionId: String
    public var environment: String
    public var entries: [SubscriptionEntry]
    public var renewal: RenewalObservation?
    /// The submission or notification that showed it.
    public var source: String

    public init(originalTransactionId: String, environment: String, entries: [SubscriptionEntry], renewal: RenewalObservation?, source: String) {
        self.originalTransactionId = originalTransactionId
        self.environment = environment
        self.entries = entries
        self.renewal = renewal
        self.source = source
    }
}

/// One transaction of a subscription as Apple showed it. Dates: milliseconds since 1970, UTC.
///
/// The billing plan, commitment and price are those Apple signed (signed transactions only);
/// absent for a transaction seen only in a receipt and in entries recorded before they were.
public struct SubscriptionEntry: Sendable, Hashable, Codable {
    public var transactionId: String
    public var productId: String
    public var purchaseDateMs: Int64?
    public var expiresDateMs: Int64?
    public var cancellationDateMs: Int64?
    public var isTrial: Bool
    public var isUpgraded: Bool
    /// Apple's `billingPlanType` as sent (`MONTHLY`, `BILLED_UPFRONT`, or a value Apple adds later).
    public var billingPlanType: String?
    /// Where the transaction stands in a commitment (`commitmentInfo`).
    public var commitment: Commitment?
    /// Apple's `price` of the transaction (an instalment, for a commitment billed monthly), in
    /// milliunits of `currency` (ISO 4217).
    public var priceMilliunits: Int64?
    public var currency: String?

    public init(
        transactionId: String, productId: String, purchaseDateMs: Int64?, expiresDateMs: Int64?, cancellationDateMs: Int64?,
        isTrial: Bool, isUpgraded: Bool, billingPlanType: String? = nil, commitment: Commitment? = nil,
        priceMilliunits: Int64? = nil, currency: String? = nil
    ) {
        self.transactionId = transactionId
        self.productId = productId
        self.purchaseDateMs = purchaseDateMs
        self.expiresDateMs = expiresDateMs
        self.cancellationDateMs = cancellationDateMs
        self.isTrial = isTrial
        self.isUpgraded = isUpgraded
        self.billingPlanType = billingPlanType
        self.commitment = commitment
        self.priceMilliunits = priceMilliunits
        self.currency = currency
    }

    /// `self` completed by another copy of the same transaction, by the rules of the
    /// subscription entries' upsert: purchase date, billing plan, commitment (field by field)
    /// and price from the first copy that has them; the latest expiry; the earliest
    /// cancellation; trial and upgrade if either says so. `ProjectionBatch` and the tests'
    /// in-memory fold merge with this, so both agree with the SQL.
    public func merged(with other: SubscriptionEntry) -> SubscriptionEntry {
        var merged = self
        merged.purchaseDateMs = purchaseDateMs ?? other.purchaseDateMs
        merged.expiresDateMs = [expiresDateMs, other.expiresDateMs].compactMap { $0 }.max()
        merged.cancellationDateMs = [cancellationDateMs, other.cancellationDateMs].compactMap { $0 }.min()
        merged.isTrial = isTrial || other.isTrial
        merged.isUpgraded = isUpgraded || other.isUpgraded
        merged.billingPlanType = billingPlanType ?? other.billingPlanType
        merged.commitment = Commitment.merged(commitment, other.commitment)
        merged.priceMilliunits = priceMilliunits ?? other.priceMilliunits
        merged.currency = currency ?? other.currency
        return merged
    }
}

/// A subscription's renewal state as Apple showed it at `observedAtMs` (`pending_renewal_info`,
/// signed renewal info); the newest observation wins.
public struct RenewalObservation: Sendable, Hashable, Codable {
    public var observedAtMs: Int64
    public var autoRenew: Bool?
    public var autoRenewProductId: String?
    public var inBillingRetry: Bool?
    public var gracePeriodExpiresMs: Int64?

    public init(observedAtMs: Int64, autoRenew: Bool?, autoRenewProductId: String?, inBillingRetry: Bool?, gracePeriodExpiresMs: Int64?) {
        self.observedAtMs = observedAtMs
        self.autoRenew = autoRenew
        self.autoRenewProductId = autoRenewProductId
        self.inBillingRetry = inBillingRetry
        self.gracePeriodExpiresMs = gracePeriodExpiresMs
    }
}

/// The app used some of a user's balance (`POST /v1/users/{user_id}/spend`). Recorded once per
/// `spend_id` (the event's idempotency key), in the user's wallet stream for the unit, appended
/// expecting the version the balance was read at, so two spends never both take the last coins.
public struct BalanceSpent: LedgerEventPayload {
    public static let eventType = "BalanceSpent"
    public var userId: String
    /// The grant unit spent (`coins`).
    public var unit: String
    /// How much, in the unit; positive.
    public var amount: Int64
    /// The app's id for this spend: the same id again is the same spend.
    public var spendId: String
    public var reason: String?
    /// The balance after this spend, as the wallet stood when it was recorded.
    public var balanceAfter: Int64
    /// The purchases this spend used, oldest first (first in, first out).
    public var attributions: [SpendAttribution]
    /// Milliseconds since 1970, UTC.
    public var spentAtMs: Int64

    /// The app whose balance was spent; absent in events recorded before several apps (docs/several-apps.md).
    public var bundleId: String?

    public init(
        userId: String, unit: String, amount: Int64, spendId: String, reason: String?, balanceAfter: Int64,
        attributions: [SpendAttribution], spentAtMs: Int64, bundleId: String? = nil
    ) {
        self.bundleId = bundleId
        self.userId = userId
        self.unit = unit
        self.amount = amount
        self.spendId = spendId
        self.reason = reason
        self.balanceAfter = balanceAfter
        self.attributions = attributions
        self.spentAtMs = spentAtMs
    }
}

/// The share of one spend taken from one purchase's grant.
public struct SpendAttribution: Codable, Sendable, Hashable {
    public var transactionId: String
    public var amount: Int64

    public init(transactionId: String, amount: Int64) {
        self.transactionId = transactionId
        self.amount = amount
    }
}

/// Whether the user agreed that consumption data may be sent to Apple when it asks about a
/// refund request (`POST /v1/users/{user_id}/consent`). The latest one holds.
public struct ConsumptionConsentRecorded: LedgerEventPayload {
    public static let eventType = "ConsumptionConsentRecorded"
    public var userId: String
    public var consumptionData: Bool
    /// Milliseconds since 1970, UTC.
    public var recordedAtMs: Int64

    /// The app the user consented in; absent in events recorded before several apps (docs/several-apps.md).
    public var bundleId: String?

    public init(userId: String, consumptionData: Bool, recordedAtMs: Int64, bundleId: String? = nil) {
        self.bundleId = bundleId
        self.userId = userId
        self.consumptionData = consumptionData
        self.recordedAtMs = recordedAtMs
    }
}

/// The renewal state of one subscription: one per Apple ID and subscription group.
///
/// Times are milliseconds since 1970 (UTC) on the simulated clock.
public struct SimulatedSubscription: Sendable, Codable, Hashable {
    public var originalTransactionId: String
    public var appleId: String
    public var environment: SimulatedEnvironment
    public var subscriptionGroup: String
    /// Product of the current (latest) period.
    public var productId: String
    /// Product the next renewal will bill (differs after a downgrade or crossgrade).
    public var autoRenewProductId: String
    public var autoRenewEnabled: Bool
    public var latestTransactionId: String
    /// End of the latest paid period (or of the free trial).
    public var expiresDateMs: Int64
    /// Start of the run of periods the renewal dates count from: the end of the free trial, or
    /// the purchase, upgrade, re-subscription or billing recovery that began the run. Counting
    /// from it, not from the last renewal, keeps a monthly plan bought on Jan 31 on the 31st
    /// after renewing on Feb 29.
    public var periodAnchorMs: Int64
    /// Paid periods since `periodAnchorMs`, the current one included (0 during a free trial):
    /// `expiresDateMs` is this many periods after the anchor, plus `renewalShiftMs`.
    public var periodsSinceAnchor: Int
    /// When set, renewals fail (card declined) until cleared.
    public var billingFails: Bool
    /// Start of the billing retry period; nil when not retrying.
    public var billingRetrySinceMs: Int64?
    /// End of the grace period during billing retry; nil when none.
    public var gracePeriodExpiresDateMs: Int64?
    /// True once GRACE_PERIOD_EXPIRED was sent for the current billing retry.
    public var gracePeriodExpiryNotified: Bool = false
    /// Apple's `expiration_intent`: 1 customer cancelled, 2 billing error; nil while active.
    public var expirationIntent: Int?
    /// True once its current period was refunded or revoked: no more renewals.
    public var isRevoked: Bool
    /// True once the subscription lapsed for good (auto-renew off, retry ended, or revoked).
    public var hasEnded: Bool
    /// The commitment the latest period is billed against, for the renewal info's
    /// `commitmentInfo`; nil for a product billed up front.
    public var commitment: SimulatedCommitment? = nil
    /// Renewal-date extensions granted since `periodAnchorMs`, in milliseconds: every period end
    /// of the run is this much later than its count from the anchor, since Apple moves the
    /// renewal date and the dates after it by the days granted. 0 again when a new run begins.
    public var renewalShiftMs: Int64 = 0

    /// Leaves billing retry (recovered, expired or refunded): no retry, no grace period.
    mutating func leaveBillingRetry() {
        billingRetrySinceMs = nil
        gracePeriodExpiresDateMs = nil
        gracePeriodExpiryNotified = false
    }

    /// A grace period still to be announced as expired, if one ends before the retry does.
    var pendingGraceExpiry: Int64? {
        guard let since = billingRetrySinceMs, let grace = gracePeriodExpiresDateMs, !gracePeriodExpiryNotified,
            grace < since + SimulatorState.billingRetryMs
        else { return nil }
        return grace
    }

    /// Whether the subscription still gives access at `nowMs` (paid period or grace).
    public func isActive(at nowMs: Int64) -> Bool {
        if isRevoked { return false }
        if nowMs < expiresDateMs { return true }
        if let grace = gracePeriodExpiresDateMs, nowMs < grace { return true }
        return false
    }
}

/// A subscription's state, computed from the merged transactions Apple showed of it and its
/// newest renewal information, at a given instant. A function of the set of entries, not of
/// the order they were seen in.
public struct SubscriptionSummary: Sendable, Hashable {
    public enum Status: String, Sendable, Hashable, Codable {
        case active
        case expired
        case inGracePeriod = "in_grace_period"
        case inBillingRetry = "in_billing_retry"
        case revoked
    }

    public var productId: String
    public var status: Status
    /// End of access, milliseconds since 1970, UTC: the latest expiry, cut short by a refund.
    public var expiresAtMs: Int64?
    public var autoRenew: Bool?
    public var inTrial: Bool
    /// Where its commitment stands, when its latest transaction is an instalment of one
    /// (`billingPlanType` and `commitmentInfo`, API 1.21); nil otherwise.
    public var commitment: CommitmentStanding?

    /// - Parameters:
    ///   - entries: every transaction of the subscription, merged by transaction id.
    ///   - nowMs: the instant the status is for.
    public init?(entries: [SubscriptionEntry], renewal: RenewalObservation?, nowMs: Int64) {
        guard !entries.isEmpty else { return nil }
        // A transaction upgraded away from gives its access to the new plan, which has an entry
        // of its own; a refunded one gives none after its cancellation date.
        let live = entries.filter { !$0.isUpgraded }
        func end(_ e: SubscriptionEntry) -> Int64? {
            guard let expires = e.expiresDateMs else { return e.cancellationDateMs }
            return e.cancellationDateMs.map { min($0, expires) } ?? expires
        }
        // Ties are broken by transaction id, so the answer never depends on input order.
        let latest = (live.isEmpty ? entries : live).max { a, b in
            let (ea, eb) = (end(a) ?? Int64.min, end(b) ?? Int64.min)
            return ea != eb ? ea < eb : a.transactionId < b.transactionId
        }!
        productId = latest.productId
        expiresAtMs = end(latest)
        inTrial = latest.isTrial && (latest.expiresDateMs ?? Int64.min) > nowMs && latest.cancellationDateMs == nil
        autoRenew = renewal?.autoRenew
        commitment = CommitmentStanding(latest)
        if !live.isEmpty, live.allSatisfy({ $0.cancellationDateMs != nil }) {
            status = .revoked
        } else if let expires = expiresAtMs, expires > nowMs {
            status = .active
        } else if let grace = renewal?.gracePeriodExpiresMs, grace > nowMs, renewal?.inBillingRetry == true {
            status = .inGracePeriod
        } else if renewal?.inBillingRetry == true {
            status = .inBillingRetry
        } else {
            status = .expired
        }
    }
}

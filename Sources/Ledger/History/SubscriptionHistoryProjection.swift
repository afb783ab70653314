/// Every renewal state Apple signed for each subscription, as rows that only accumulate: with
/// the subscription entries (`SubscriptionsProjection`), what `SubscriptionHistory` reads a
/// subscription's past states from. The subscriptions projection keeps only the newest state,
/// which says where a subscription stands today and nothing of when it was in billing retry.
public struct SubscriptionHistoryProjection: PlacelessProjection {
    public init() {}
    public let name = "subscription_history"
    public let version: Int32 = 1
    public let tables = ["projection_renewal_observations"]

    public func changes(for event: LedgerEvent) -> [ProjectionChange] {
        guard case .subscriptionObserved(let o) = event, let renewal = o.renewal else { return [] }
        return [.recordRenewalObservation(originalTransactionId: o.originalTransactionId, renewal: renewal)]
    }
}

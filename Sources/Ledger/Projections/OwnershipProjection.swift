/// Ownership per `original_transaction_id` (who holds it, and every change of holder) and per
/// Apple account: purchases carrying one `appTransactionId`, or listed together in one receipt,
/// belong to one Apple account, united across every receipt seen (docs/http-api.md
/// `GET /v1/ownership/...`, `GET /v1/apple-accounts/...`).
public struct OwnershipProjection: Projection {
    public init() {}
    public let name = "ownership"
    /// 2: an upgraded transaction's revocation changes no holder (access goes on under the new plan).
    public let version: Int32 = 2
    public let tables = ["projection_ownership", "projection_ownership_history", "projection_apple_account_members"]

    public func changes(for event: LedgerEvent, at place: EventPlace) -> [ProjectionChange] {
        switch event {
        case .purchaseDelivered(let d):
            // Owned kinds change hands through their ownership events; a consumable's holder is
            // whoever it was delivered to.
            var changes: [ProjectionChange] = [.linkAppleAccount(originalTransactionIds: [d.originalTransactionId], appTransactionId: d.appTransactionId)]
            if !d.kind.isOwned {
                changes.append(.changeOwner(
                    originalTransactionId: d.originalTransactionId, bundleId: d.bundleId, productId: d.productId, kind: d.kind, environment: d.environment,
                    userId: d.userId, reason: "delivered", place: place))
            }
            return changes
        case .ownershipClaimed(let c):
            return [.changeOwner(
                originalTransactionId: c.originalTransactionId, bundleId: c.bundleId, productId: c.productId, kind: c.kind, environment: c.environment,
                userId: c.userId, reason: "delivered", place: place)]
        case .ownershipTransferred(let t):
            return [.changeOwner(
                originalTransactionId: t.originalTransactionId, bundleId: t.bundleId, productId: t.productId, kind: t.kind, environment: t.environment,
                userId: t.toUserId, reason: "transferred", place: place)]
        case .purchaseRefunded(let r) where r.endsAccess:
            return [.changeOwner(
                originalTransactionId: r.originalTransactionId, bundleId: r.bundleId, productId: r.productId, kind: r.kind, environment: r.environment,
                userId: nil, reason: r.revocation == "revoke" ? "revoked" : "refunded", place: place)]
        case .refundReversed(let v) where v.refund.endsAccess:
            let r = v.refund
            return [.changeOwner(
                originalTransactionId: r.originalTransactionId, bundleId: r.bundleId, productId: r.productId, kind: r.kind, environment: r.environment,
                userId: r.userId, reason: "refund_reversed", place: place)]
        case .appleAccountObserved(let a):
            return [.linkAppleAccount(originalTransactionIds: a.originalTransactionIds, appTransactionId: a.appTransactionId)]
        default:
            return []
        }
    }
}

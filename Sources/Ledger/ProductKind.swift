/// What kind of in-app purchase a product is (docs/configuration.md catalog `kind`).
public enum ProductKind: String, Sendable, Hashable, Codable, CaseIterable {
    case consumable
    case nonConsumable = "non_consumable"
    case autoRenewable = "auto_renewable"
    case nonRenewing = "non_renewing"

    /// Non-consumables and subscriptions are owned (by `original_transaction_id`) and restored;
    /// consumables are used up and vanish from receipts once finished.
    public var isOwned: Bool { self != .consumable }

    /// Apple's JWS `type` values for each kind.
    public init?(appleType: String) {
        switch appleType {
        case "Consumable": self = .consumable
        case "Non-Consumable": self = .nonConsumable
        case "Auto-Renewable Subscription": self = .autoRenewable
        case "Non-Renewing Subscription": self = .nonRenewing
        default: return nil
        }
    }
}

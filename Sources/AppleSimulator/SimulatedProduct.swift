/// A product the simulated App Store sells: what it is, what it costs, how it renews.
///
/// Prices are integer milliunits (1.99 USD = 1990), as in Apple's JWS `price`.
/// Subscription periods are calendar months (`periodMonths`, a year being 12) or whole days
/// (`periodDays`), counted in UTC from the start of the run of periods as Apple does: a monthly
/// plan bought on Jan 31 renews on Feb 29 (28), Mar 31, Apr 30. Free trials and grace periods
/// are whole days.
public struct SimulatedProduct: Sendable, Codable, Hashable {
    /// Apple's product types, with the raw values of the ledger's catalog (`docs/configuration.md`).
    public enum Kind: String, Sendable, Codable, Hashable {
        case consumable
        case nonConsumable = "non_consumable"
        case autoRenewable = "auto_renewable"
        case nonRenewing = "non_renewing"

        /// The JWS `type` field for this kind.
        var jwsType: String {
            switch self {
            case .consumable: "Consumable"
            case .nonConsumable: "Non-Consumable"
            case .autoRenewable: "Auto-Renewable Subscription"
            case .nonRenewing: "Non-Renewing Subscription"
            }
        }
    }

    public var productId: String
    public var kind: Kind
    /// Price of one unit in milliunits of `currency`, as sold in that currency's storefronts;
    /// elsewhere the same price tier in the storefront's currency
    /// (`PriceTerritory.equivalentPrice`).
    public var priceMilliunits: Int64
    /// ISO 4217 code, e.g. "USD".
    public var currency: String
    /// `subscription_group_identifier`; auto-renewables only.
    public var subscriptionGroup: String?
    /// Rank inside the group: 1 is the highest level of service. Moving to a lower number is an
    /// upgrade (immediate), to a higher number a downgrade (at the next renewal), as Apple does.
    public var groupLevel: Int?
    /// Length of one paid period in days (7 for a weekly plan); used when `periodMonths` is nil.
    /// Auto-renewables only.
    public var periodDays: Int?
    /// Length of one paid period in calendar months (1 monthly, 12 yearly); wins over
    /// `periodDays`. Neither set: one month. Auto-renewables only.
    public var periodMonths: Int?
    /// Length of the free trial in days offered to an Apple ID new to the group; nil: none.
    public var trialDays: Int?
    /// Billing grace period in days after a failed renewal; nil: no grace period.
    public var gracePeriodDays: Int?
    /// The SKU App Store Connect reports show for the product; nil: the product id (`reportSKU`).
    public var sku: String?
    /// The product's Apple ID (adamId) in App Store Connect reports; nil: one derived from the
    /// product id (`reportAppleIdentifier`).
    public var appleIdentifier: String?
    /// Billed each period against a commitment of this many periods (12 with `periodMonths` 1:
    /// a year's commitment billed monthly, Apple's `billingPlanType` `MONTHLY`, API 1.21):
    /// `priceMilliunits` is the instalment, the commitment costs this many of them. nil: billed
    /// up front, one price per period. Auto-renewables only.
    public var commitmentPeriods: Int?

    public init(
        productId: String, kind: Kind, priceMilliunits: Int64, currency: String = "USD",
        subscriptionGroup: String? = nil, groupLevel: Int? = nil, periodDays: Int? = nil,
        periodMonths: Int? = nil, trialDays: Int? = nil, gracePeriodDays: Int? = nil,
        sku: String? = nil, appleIdentifier: String? = nil, commitmentPeriods: Int? = nil
    ) {
        self.productId = productId
        self.kind = kind
        self.priceMilliunits = priceMilliunits
        self.currency = currency
        self.subscriptionGroup = subscriptionGroup
        self.groupLevel = groupLevel
        self.periodDays = periodDays
        self.periodMonths = periodMonths
        self.trialDays = trialDays
        self.gracePeriodDays = gracePeriodDays
        self.sku = sku
        self.appleIdentifier = appleIdentifier
        self.commitmentPeriods = commitmentPeriods
    }

    /// The catalog used when none is given: the products of `docs/configuration.md`'s example plus a
    /// yearly plan in the same group (to upgrade to), a non-consumable, and a 12-month commitment
    /// billed monthly (4.99 USD an instalment, 59.88 the commitment) in a group of its own.
    public static let defaultCatalog: [SimulatedProduct] = [
        SimulatedProduct(productId: "com.example.coins100", kind: .consumable, priceMilliunits: 990),
        SimulatedProduct(productId: "com.example.removeads", kind: .nonConsumable, priceMilliunits: 2990),
        SimulatedProduct(
            productId: "com.example.pro.monthly", kind: .autoRenewable, priceMilliunits: 4990,
            subscriptionGroup: "20654194", groupLevel: 2, periodMonths: 1, trialDays: 7, gracePeriodDays: 16),
        SimulatedProduct(
            productId: "com.example.pro.yearly", kind: .autoRenewable, priceMilliunits: 49990,
            subscriptionGroup: "20654194", groupLevel: 1, periodMonths: 12, trialDays: nil, gracePeriodDays: 16),
        SimulatedProduct(
            productId: "com.example.pro.committed", kind: .autoRenewable, priceMilliunits: 4990,
            subscriptionGroup: "20654195", groupLevel: 1, periodMonths: 1, trialDays: nil, gracePeriodDays: 16,
            commitmentPeriods: 12),
    ]

    /// The paid period renewals bill: `periodMonths`, else `periodDays`, else one month; never
    /// shorter than one unit, so the clock always moves a renewal forward.
    var billingPeriod: BillingPeriod {
        if let months = periodMonths { return .months(max(months, 1)) }
        if let days = periodDays { return .days(max(days, 1)) }
        return .months(1)
    }

    /// `sku`, else the product id (what most apps set as the SKU of an in-app purchase).
    public var reportSKU: String { sku ?? productId }

    /// `appleIdentifier`, else a stable 10-digit number derived from the product id: 64-bit
    /// FNV-1a of its UTF-8 bytes, mapped into 1000000000...9999999999. The same product id gives
    /// the same number in every run and process (Swift's `Hasher` is seeded per process, so it
    /// cannot serve).
    public var reportAppleIdentifier: String {
        appleIdentifier ?? Self.derivedIdentifier(productId)
    }

    /// The product's Apple ID as sold in `bundleId`: `reportAppleIdentifier` in the simulator's
    /// own app (`primaryApp`). Sold in another app of the account, the same product id is
    /// another product, and Apple's ids are unique across apps: one derived from the bundle id
    /// and the product id.
    public func reportAppleIdentifier(inApp bundleId: String, primaryApp: String) -> String {
        bundleId == primaryApp ? reportAppleIdentifier : Self.derivedIdentifier("\(bundleId) \(productId)")
    }

    static func derivedIdentifier(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return String(1_000_000_000 + hash % 9_000_000_000)
    }
}

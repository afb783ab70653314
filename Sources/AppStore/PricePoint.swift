/// One of Apple's price points (App Store Connect API): in a territory, the customer price and
/// the proceeds Apple pays for it, in the territory's currency's minor units (read exactly from
/// Apple's decimal strings). What the client reads and what `PricePointsRefreshed` records.
public struct PricePoint: Sendable, Hashable, Codable {
    /// The territory's App Store Connect id: ISO 3166-1 alpha-3 (`USA`, `JPN`).
    public var territory: String
    /// ISO 4217 code of the territory's currency (`attributes.currency`).
    public var currency: String
    /// `customerPrice`, tax included where the territory's prices include it.
    public var customerPriceMinor: Int64?
    /// `proceeds`: what Apple pays the developer for one sale at this price.
    public var proceedsMinor: Int64?
    /// `proceedsYear2`: proceeds from a subscriber's second year of paid service (subscriptions).
    public var proceedsYear2Minor: Int64?

    public init(territory: String, currency: String, customerPriceMinor: Int64?, proceedsMinor: Int64?, proceedsYear2Minor: Int64? = nil) {
        self.territory = territory
        self.currency = currency
        self.customerPriceMinor = customerPriceMinor
        self.proceedsMinor = proceedsMinor
        self.proceedsYear2Minor = proceedsYear2Minor
    }
}

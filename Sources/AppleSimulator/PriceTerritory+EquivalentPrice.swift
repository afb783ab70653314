import Foundation

/// One unit's price in a storefront: milliunits of `currency`, as Apple's JWS `price`.
struct StorefrontPrice: Sendable, Hashable {
    var milliunits: Int64
    /// ISO 4217.
    var currency: String
}

extension PriceTerritory {
    /// The territory of `storefront` (ISO 3166-1 alpha-3, matched by `id`); nil for a
    /// storefront outside the simulator's six.
    static func of(storefront: String) -> PriceTerritory? {
        all.first { $0.id == storefront }
    }

    /// What one unit of `product` costs in `storefront`, as Apple charges it: the product's
    /// price tier carried over to the storefront's currency, the rule of every purchase,
    /// renewal and commitment instalment the simulator bills.
    ///
    /// The tier is the index of the product's price among the customer prices of the first
    /// territory priced in the product's currency (USA for a USD product, as App Store Connect
    /// equalizes from the base territory); the same index in the storefront's territory is the
    /// price. A 0.99 USD product costs 0.99 EUR in DEU and 160 JPY in JPN.
    ///
    /// The product's own price and currency stay when the storefront is outside the six
    /// territories, when its territory already sells in the product's currency, or when the
    /// price is no tier of its currency (a 1.20 USD product, or 120 JPY): the simulator has no
    /// equivalent to offer, and charging the catalog's price keeps such tests as they were.
    static func equivalentPrice(of product: SimulatedProduct, in storefront: String) -> StorefrontPrice {
        let own = StorefrontPrice(milliunits: product.priceMilliunits, currency: product.currency)
        guard let territory = of(storefront: storefront), territory.currency != product.currency,
            let base = all.first(where: { $0.currency == product.currency }),
            let tier = base.tier(ofMilliunits: product.priceMilliunits),
            tier < territory.customerPrices.count
        else { return own }
        return StorefrontPrice(
            milliunits: territory.customerPrices[tier] * territory.milliunitsPerMinorUnit, currency: territory.currency)
    }

    /// Milliunits in one minor unit of the currency: 10 for cents, 1000 for whole yen.
    var milliunitsPerMinorUnit: Int64 {
        var value: Int64 = 1
        for _ in 0..<max(3 - minorUnitDigits, 0) { value *= 10 }
        return value
    }

    /// The index of a price (milliunits of this territory's currency) among `customerPrices`;
    /// nil when it is none of them, or is no whole number of minor units.
    func tier(ofMilliunits milliunits: Int64) -> Int? {
        let (minor, rest) = milliunits.quotientAndRemainder(dividingBy: milliunitsPerMinorUnit)
        guard rest == 0 else { return nil }
        return customerPrices.firstIndex(of: minor)
    }
}

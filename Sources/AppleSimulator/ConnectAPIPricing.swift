import Foundation
import Primitives

/// A change of a territory's VAT/GST rate on a date: from `from` (on the simulated clock) the
/// App Store Connect price points of `territory` pay proceeds computed with `ratePercent`, and so
/// do the reports' sales bought there from then on. Customer prices stay as they are, as
/// Apple's do when a tax changes.
public struct TaxChange: Sendable, Hashable, Codable {
    /// The territory's ISO 3166-1 alpha-3 code, as App Store Connect names it ("DEU").
    public var territory: String
    /// The first instant the new rate applies.
    public var from: Date
    /// The new rate in percent (16 for 16 %).
    public var ratePercent: Decimal

    public init(territory: String, from: Date, ratePercent: Decimal) {
        self.territory = territory
        self.from = from
        self.ratePercent = ratePercent
    }
}

/// A territory the simulated App Store Connect sells in, with its currency, its tax and its
/// customer prices (one per price point, in minor units of the currency). A purchase in the
/// territory's storefront is charged from these prices (`equivalentPrice(of:in:)`).
public struct PriceTerritory: Sendable, Hashable {
    /// ISO 3166-1 alpha-3, as App Store Connect names territories.
    public var id: String
    /// ISO 4217.
    public var currency: String
    /// Digits of the currency's minor unit (2 for USD, 0 for JPY).
    public var minorUnitDigits: Int
    /// The VAT/GST rate Apple deducts before its commission, in percent (0 for the USA, where
    /// prices are shown without sales tax).
    public var taxRatePercent: Decimal
    /// Customer prices in minor units, ascending: equivalents of 0.99, 2.99, 4.99, 9.99, 29.99
    /// and 49.99 USD.
    public var customerPrices: [Int64]

    /// The six territories of the simulator, in App Store Connect's order (by id).
    ///
    /// Rates: DEU 19 %, FRA 20 %, GBR 20 %, JPN 10 % (consumption tax), USA 0 %. BRA 10 % is an
    /// assumption of the simulator (Apple does not publish one flat Brazilian rate; it withholds
    /// several taxes); change it with a `TaxChange` when a test needs another figure.
    public static let all: [PriceTerritory] = [
        PriceTerritory(
            id: "BRA", currency: "BRL", minorUnitDigits: 2, taxRatePercent: 10,
            customerPrices: [590, 1790, 2990, 5990, 17990, 29990]),
        PriceTerritory(
            id: "DEU", currency: "EUR", minorUnitDigits: 2, taxRatePercent: 19,
            customerPrices: [99, 299, 499, 999, 2999, 4999]),
        PriceTerritory(
            id: "FRA", currency: "EUR", minorUnitDigits: 2, taxRatePercent: 20,
            customerPrices: [99, 299, 499, 999, 2999, 4999]),
        PriceTerritory(
            id: "GBR", currency: "GBP", minorUnitDigits: 2, taxRatePercent: 20,
            customerPrices: [99, 299, 499, 999, 2999, 4999]),
        PriceTerritory(
            id: "JPN", currency: "JPY", minorUnitDigits: 0, taxRatePercent: 10,
            customerPrices: [160, 500, 800, 1500, 4500, 7500]),
        PriceTerritory(
            id: "USA", currency: "USD", minorUnitDigits: 2, taxRatePercent: 0,
            customerPrices: [99, 299, 499, 999, 2999, 4999]),
    ]
}

/// One App Store Connect price point as the simulator serves it.
struct SimulatedPricePoint: Sendable, Hashable {
    /// Apple-style opaque id: base64url of `{"s":"<apple id>","t":"<territory>","p":"<point>"}`.
    var id: String
    var territory: String
    var currency: String
    var customerPrice: String
    var proceeds: String
    /// Subscriptions only: the proceeds after a year of paid service (15 % commission).
    var proceedsYear2: String?
}

/// Apple's proceeds for a customer price, and the price points of a product.
///
/// The rule (the simulator's, documented; Apple publishes figures, not a formula):
/// 1. net = customer price / (1 + tax rate), unrounded;
/// 2. commission = net × 30 % (15 % for `proceedsYear2`), rounded DOWN to the currency's minor
///    unit (Apple keeps whole minor units);
/// 3. proceeds = net − commission, rounded half up to the minor unit.
///
/// This gives Apple's own US figures for 0.99 → 0.70 and 2.99 → 2.10 (where `price × 0.7`
/// rounded to nearest would give 0.69 and 2.09), and DEU 9.99 EUR → 5.88. Known differences
/// from Apple's published figures: US 0.99 `proceedsYear2` is 0.85 here, 0.84 at Apple.
enum PricePoints {
    static let commissionPercent: Decimal = 30
    static let year2CommissionPercent: Decimal = 15

    /// The proceeds, in minor units, of `customerPrice` (minor units).
    static func proceeds(
        customerPrice: Int64, minorUnitDigits: Int, taxRatePercent: Decimal, commissionPercent: Decimal
    ) -> Int64 {
        let unit = power10(minorUnitDigits)
        let price = Decimal(customerPrice) / unit
        let net = price / (1 + taxRatePercent / 100)
        let commission = rounded(net * commissionPercent / 100, minorUnitDigits, .down)
        let proceeds = rounded(net - commission, minorUnitDigits, .plain)
        return NSDecimalNumber(decimal: proceeds * unit).int64Value
    }

    /// A decimal string as Apple writes them: no trailing zeros, at least one digit after the
    /// point ("0.7", "5.9", "160.0", "0.99").
    static func appleDecimal(_ minorUnits: Int64, minorUnitDigits: Int) -> String {
        let negative = minorUnits < 0
        let magnitude = minorUnits.magnitude
        let unit = UInt64(NSDecimalNumber(decimal: power10(minorUnitDigits)).int64Value)
        let whole = magnitude / unit
        var fraction = ""
        if minorUnitDigits > 0 {
            let digits = String(magnitude % unit)
            fraction = String(repeating: "0", count: minorUnitDigits - digits.count) + digits
            while fraction.hasSuffix("0") { fraction.removeLast() }
        }
        if fraction.isEmpty { fraction = "0" }
        return (negative ? "-" : "") + "\(whole).\(fraction)"
    }

    /// The tax rate of `territory` at `date`: the latest change in force, else the default.
    static func taxRate(of territory: PriceTerritory, at date: Date, changes: [TaxChange]) -> Decimal {
        changes.filter { $0.territory == territory.id && $0.from <= date }
            .max { $0.from < $1.from }?.ratePercent ?? territory.taxRatePercent
    }

    /// Every price point of `product` at `date`, by territory then price. The product's own
    /// price is a point of every territory in its currency even when not among the defaults.
    static func points(
        of product: SimulatedProduct, appleId: String, at date: Date, taxChanges: [TaxChange]
    ) -> [SimulatedPricePoint] {
        let subscription = product.kind == .autoRenewable
        var points: [SimulatedPricePoint] = []
        for territory in PriceTerritory.all {
            var prices = territory.customerPrices
            if product.currency == territory.currency {
                // milliunits → minor units (1990 milliunits = 199 cents = 1.99; JPY: 160000 → 160).
                let divisor = Int64(NSDecimalNumber(decimal: power10(3 - territory.minorUnitDigits)).int64Value)
                let own = product.priceMilliunits / divisor
                if !prices.contains(own) { prices = (prices + [own]).sorted() }
            }
            let rate = taxRate(of: territory, at: date, changes: taxChanges)
            for (index, price) in prices.enumerated() {
                let digits = territory.minorUnitDigits
                let year1 = proceeds(
                    customerPrice: price, minorUnitDigits: digits, taxRatePercent: rate,
                    commissionPercent: commissionPercent)
                let year2 = proceeds(
                    customerPrice: price, minorUnitDigits: digits, taxRatePercent: rate,
                    commissionPercent: year2CommissionPercent)
                let point = String(10_000 + index + 1)
                let idJSON = #"{"s":"\#(appleId)","t":"\#(territory.id)","p":"\#(point)"}"#
                points.append(
                    SimulatedPricePoint(
                        id: Base64URL.encode(Data(idJSON.utf8)), territory: territory.id, currency: territory.currency,
                        customerPrice: appleDecimal(price, minorUnitDigits: digits),
                        proceeds: appleDecimal(year1, minorUnitDigits: digits),
                        proceedsYear2: subscription ? appleDecimal(year2, minorUnitDigits: digits) : nil))
            }
        }
        return points
    }

    private static func power10(_ digits: Int) -> Decimal {
        var value: Decimal = 1
        for _ in 0..<max(digits, 0) { value *= 10 }
        return value
    }

    private static func rounded(_ value: Decimal, _ scale: Int, _ mode: NSDecimalNumber.RoundingMode) -> Decimal {
        var input = value
        var output = Decimal()
        NSDecimalRound(&output, &input, scale, mode)
        return output
    }
}

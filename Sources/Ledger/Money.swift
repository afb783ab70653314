import AppStore

/// An amount of money in integer minor units of one currency (99 USD cents = 0.99 USD).
///
/// Never floating point. Amounts of different currencies are never added together: `+` on two
/// currencies is a programming error, so callers group by currency first.
public struct Money: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Minor units (cents for USD, yen for JPY).
    public var minorUnits: Int64
    /// ISO 4217 code, upper case.
    public var currency: String

    public init(minorUnits: Int64, currency: String) {
        self.minorUnits = minorUnits
        self.currency = currency
    }

    /// Converts Apple's milliunits (JWS `price`: 10990 = 10.99) to minor units of `currency`,
    /// rounding half away from zero.
    public static func fromMilliunits(_ milliunits: Int64, currency: String) -> Money {
        let divisor: Int64 = [1000, 100, 10][minorDigits(of: currency)]
        let (quotient, remainder) = milliunits.quotientAndRemainder(dividingBy: divisor)
        let rounded = abs(remainder) * 2 >= divisor ? quotient + (milliunits < 0 ? -1 : 1) : quotient
        return Money(minorUnits: divisor == 1 ? milliunits : rounded, currency: currency)
    }

    /// The number of minor digits of a currency: 0 for the zero-decimal currencies Apple sells
    /// in, 2 otherwise (`AppleCurrencies`, which Apple's reports are read by too).
    public static func minorDigits(of currency: String) -> Int {
        AppleCurrencies.minorDigits(of: currency)
    }

    public var description: String { "\(minorUnits) \(currency) minor units" }

    /// The amount as a plain decimal in major units ("-12.05", "120" for JPY), built from the
    /// integer, for CSV and tables.
    public var decimal: String {
        let digits = Self.minorDigits(of: currency)
        guard digits > 0 else { return String(minorUnits) }
        let magnitude = minorUnits.magnitude
        let scale: UInt64 = 100
        let fraction = String(magnitude % scale)
        return (minorUnits < 0 ? "-" : "") + "\(magnitude / scale)." + (fraction.count < 2 ? "0" + fraction : fraction)
    }
}

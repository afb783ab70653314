/// Reads Apple's decimal strings ("0.99", "0.7", "160.0") exactly into a currency's minor
/// units: no `Double` anywhere, and an amount with more significant decimals than the currency
/// has is refused rather than rounded.
public enum DecimalMinorUnits {
    /// The ISO 4217 minor-unit exponent of a currency Apple sells in: 0 for the zero-decimal
    /// ones, 2 otherwise. The same table as `Ledger.Money.minorDigits(of:)`, so the price points
    /// and the rest of the ledger agree on what a minor unit is.
    public static func exponent(of currency: String) -> Int {
        zeroDecimalCurrencies.contains(currency.uppercased()) ? 0 : 2
    }

    static let zeroDecimalCurrencies: Set<String> = ["JPY", "KRW", "CLP", "VND", "ISK", "HUF", "TWD", "UGX", "PYG", "XOF", "XAF"]

    /// `text` ("160.0", "0.7", "-1.25") in minor units of `currency`: 0.7 USD is 70, 160.0 JPY
    /// is 160. Nil when `text` is not a plain decimal (no exponent, no spaces, no grouping), has
    /// a non-zero digit past the currency's exponent ("1.005" USD), or overflows `Int64`.
    public static func parse(_ text: some StringProtocol, currency: String) -> Int64? {
        parse(text, exponent: exponent(of: currency))
    }

    /// `text` scaled by 10^`exponent`, exactly; nil as in `parse(_:currency:)`.
    public static func parse(_ text: some StringProtocol, exponent: Int) -> Int64? {
        var bytes = Substring(text).utf8[...]
        var negative = false
        if let first = bytes.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
            negative = first == UInt8(ascii: "-")
            bytes = bytes.dropFirst()
        }
        let point = bytes.firstIndex(of: UInt8(ascii: "."))
        let whole = point.map { bytes[..<$0] } ?? bytes
        var fraction = point.map { bytes[bytes.index(after: $0)...] } ?? bytes[bytes.endIndex...]
        guard !whole.isEmpty || !fraction.isEmpty else { return nil }
        if point != nil, fraction.isEmpty, whole.isEmpty { return nil }
        // Trailing zeros past the exponent say nothing ("160.0" JPY, "0.990" USD).
        while fraction.count > exponent, fraction.last == UInt8(ascii: "0") { fraction = fraction.dropLast() }
        guard fraction.count <= exponent else { return nil }
        var value: Int64 = 0
        func push(_ digit: UInt8) -> Bool {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) else { return false }
            let (times, o1) = value.multipliedReportingOverflow(by: 10)
            let (plus, o2) = times.addingReportingOverflow(Int64(digit - UInt8(ascii: "0")))
            guard !o1, !o2 else { return false }
            value = plus
            return true
        }
        for digit in whole { guard push(digit) else { return nil } }
        for digit in fraction { guard push(digit) else { return nil } }
        for _ in 0..<(exponent - fraction.count) { guard push(UInt8(ascii: "0")) else { return nil } }
        return negative ? -value : value
    }
}

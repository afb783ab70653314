import Primitives

/// Reads the values of report fields exactly: dates, whole units, currency codes and decimal
/// amounts, each error naming the line and column.
///
/// Amounts are read digit by digit into integers, never through `Double`: "0.29" is not a
/// binary fraction, and a ledger that rounds on the way in cannot be reconciled.
enum ReportValue {
    /// Units or amounts beyond this are refused: no report holds them, and the limit keeps every
    /// sum of a report's rows far from `Int64` overflow.
    static let maxMagnitude: Int64 = 1_000_000_000_000

    /// "MM/DD/YYYY" (Apple's report dates) as "YYYY-MM-DD".
    static func day(_ text: String, line: Int, column: String) throws(AppStoreReportError) -> String {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, (1...2).contains(parts[0].count), (1...2).contains(parts[1].count), parts[2].count == 4,
            parts.allSatisfy({ $0.allSatisfy(isDigit) }),
            let month = Int(parts[0]), let day = Int(parts[1]), let year = Int(parts[2]),
            (1...12).contains(month), day >= 1, Int64(day) <= UTCDays.daysIn(month: Int64(month), of: Int64(year))
        else {
            throw AppStoreReportError("\"\(text)\" is not a date MM/DD/YYYY", line: line, column: column)
        }
        return "\(year)-\(twoDigits(month))-\(twoDigits(day))"
    }

    /// A whole number of units, signed ("3", "-1").
    static func units(_ text: String, line: Int, column: String) throws(AppStoreReportError) -> Int64 {
        guard let units = Int64(text), units.magnitude <= maxMagnitude.magnitude else {
            throw AppStoreReportError("\"\(text)\" is not a whole number of units", line: line, column: column)
        }
        return units
    }

    /// An ISO 4217 code, upper-cased.
    static func currency(_ text: String, line: Int, column: String) throws(AppStoreReportError) -> String {
        let code = text.uppercased()
        guard ISO4217.isCode(code) else {
            throw AppStoreReportError("\"\(text)\" is not an ISO 4217 currency code", line: line, column: column)
        }
        return code
    }

    /// A decimal amount ("0.99", "-1.99", "120", "4.5") in minor units of `currency`, signed.
    ///
    /// Digits beyond the currency's minor digits must be zeros ("1.990" is 199 cents): a
    /// non-zero one ("0.995" USD) is an amount the currency cannot hold, refused rather than
    /// rounded.
    static func minorUnits(_ text: String, currency: String, line: Int, column: String) throws(AppStoreReportError) -> Int64 {
        guard let amount = try exactMinorUnits(text, currency: currency, line: line, column: column) else {
            let digits = AppleCurrencies.minorDigits(of: currency)
            throw AppStoreReportError(
                "\"\(text)\" has more decimals than \(currency)'s \(digits); refusing to round it", line: line, column: column)
        }
        return amount
    }

    /// Like `minorUnits`, but nil (rather than an error) for an amount with more decimals than
    /// the currency has; still an error for text that is not a decimal number.
    static func exactMinorUnits(_ text: String, currency: String, line: Int, column: String) throws(AppStoreReportError) -> Int64? {
        var rest = Substring(text)
        let isNegative = rest.first == "-"
        if rest.first == "-" || rest.first == "+" { rest = rest.dropFirst() }
        let parts = rest.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = parts.first ?? ""
        let fraction = parts.count == 2 ? parts[1] : ""
        // Digits on both sides of a point, and no more whole digits than fit in maxMagnitude
        // minor units once scaled.
        guard !whole.isEmpty, whole.count <= 10, whole.allSatisfy(isDigit),
            parts.count == 1 || !fraction.isEmpty, fraction.allSatisfy(isDigit)
        else {
            throw AppStoreReportError("\"\(text)\" is not a decimal amount", line: line, column: column)
        }
        let digits = AppleCurrencies.minorDigits(of: currency)
        guard fraction.dropFirst(digits).allSatisfy({ $0 == "0" }) else { return nil }
        let kept = String(fraction.prefix(digits))
        let padded = kept + String(repeating: "0", count: digits - kept.count)
        var scale: Int64 = 1
        for _ in 0..<digits { scale *= 10 }
        guard let major = Int64(whole), let minor = Int64(padded.isEmpty ? "0" : padded) else {
            throw AppStoreReportError("\"\(text)\" is not a decimal amount", line: line, column: column)
        }
        let magnitude = major * scale + minor
        return isNegative ? -magnitude : magnitude
    }

    private static func isDigit(_ character: Character) -> Bool {
        character.isASCII && character.isWholeNumber
    }

    private static func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
}

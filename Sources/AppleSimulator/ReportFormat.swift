import Foundation

/// Days and amounts as App Store Connect's reports write them, for the simulator's reports.
///
/// Days are Pacific (America/Los_Angeles), as for worldwide agreements: "Reports for worldwide
/// agreements use PST/PDT" (App Store Connect, Sales and Trends reports FAQ). Amounts are exact
/// decimals built from integers with the currency's minor digits.
enum ReportFormat {
    /// Gregorian calendar on Pacific time; a fixed UTC−8 if the zone is missing from the
    /// system's time zone data, so reports still come out (an hour off in summer).
    static let pacific: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "America/Los_Angeles") ?? TimeZone(secondsFromGMT: -8 * 3600) ?? .gmt
        return calendar
    }()

    /// One Pacific day: where it starts and ends (exclusive) in ms since 1970, and its spellings.
    struct Day: Sendable, Hashable {
        var startMs: Int64
        var endMs: Int64
        /// "YYYY-MM-DD".
        var iso: String
        /// "MM/DD/YYYY", Apple's report spelling.
        var apple: String
    }

    /// The Pacific day "YYYY-MM-DD" names; a DST day lasts 23 or 25 hours.
    static func day(_ text: String) throws -> Day {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            parts.allSatisfy({ part in part.allSatisfy { $0.isASCII && $0.isWholeNumber } }),
            let year = Int(parts[0]), let month = Int(parts[1]), let dayOfMonth = Int(parts[2]),
            let start = pacific.date(from: DateComponents(year: year, month: month, day: dayOfMonth)),
            let end = pacific.date(byAdding: .day, value: 1, to: start)
        else {
            throw SimulatorError(.invalidRequest, "\"\(text)\" is not a date YYYY-MM-DD")
        }
        // Foundation rolls Feb 30 over to Mar 2; a real date reads back as itself.
        let read = pacific.dateComponents([.year, .month, .day], from: start)
        guard read.year == year, read.month == month, read.day == dayOfMonth else {
            throw SimulatorError(.invalidRequest, "\"\(text)\" is not a date YYYY-MM-DD")
        }
        return Day(startMs: milliseconds(start), endMs: milliseconds(end), iso: text, apple: "\(parts[1])/\(parts[2])/\(parts[0])")
    }

    /// The Pacific day an instant (ms since 1970) falls on.
    static func day(containing ms: Int64) -> Day {
        let date = Date(timeIntervalSince1970: Double(ms) / 1000)
        let c = pacific.dateComponents([.year, .month, .day], from: date)
        let iso = "\(c.year ?? 1970)-\(twoDigits(c.month ?? 1))-\(twoDigits(c.day ?? 1))"
        // The text is built from a real date, so it parses.
        return (try? day(iso)) ?? Day(startMs: ms, endMs: ms + 1, iso: iso, apple: iso)
    }

    private static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    private static func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

    // MARK: - Amounts

    /// Minor digits: 0 for the zero-decimal currencies Apple sells in, 2 otherwise. The same
    /// list as the ledger's `Money.minorDigits(of:)`; the simulator does not depend on the
    /// ledger, whose reports it must be able to disagree with.
    static func minorDigits(of currency: String) -> Int {
        ["JPY", "KRW", "CLP", "VND", "ISK", "HUF", "TWD", "UGX", "PYG", "XOF", "XAF"].contains(currency.uppercased()) ? 0 : 2
    }

    /// Apple's milliunits (JWS `price`) in minor units of `currency`, half away from zero.
    static func minorUnits(milliunits: Int64, currency: String) -> Int64 {
        let divisor: Int64 = minorDigits(of: currency) == 0 ? 1000 : 10
        let (quotient, remainder) = milliunits.quotientAndRemainder(dividingBy: divisor)
        guard abs(remainder) * 2 >= divisor else { return quotient }
        return quotient + (milliunits < 0 ? -1 : 1)
    }

    /// The developer's proceeds on a price: 70%, half up, in the same minor units. Only for a
    /// sale no price point of the simulator matches (a storefront outside `PriceTerritory.all`,
    /// or a currency not its territory's); every other sale pays the price points' proceeds,
    /// net of tax (`PricePoints.proceeds(of:unitPrice:taxChanges:)`).
    static func proceeds(ofMinor price: Int64) -> Int64 {
        let (quotient, remainder) = (price * 7).quotientAndRemainder(dividingBy: 10)
        guard abs(remainder) * 2 >= 10 else { return quotient }
        return quotient + (price < 0 ? -1 : 1)
    }

    /// `minor` units of `currency` as a plain decimal: "0.99", "-2.99", "120".
    static func decimal(_ minor: Int64, currency: String) -> String {
        let digits = minorDigits(of: currency)
        guard digits > 0 else { return String(minor) }
        let magnitude = minor.magnitude
        let fraction = String(magnitude % 100)
        return (minor < 0 ? "-" : "") + "\(magnitude / 100)." + (fraction.count < 2 ? "0" + fraction : fraction)
    }
}

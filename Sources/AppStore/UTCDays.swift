/// Calendar days in UTC, without Foundation's calendars or formatters (slow, locale- and
/// machine-dependent): the one implementation of the proleptic Gregorian calendar that Apple's
/// date texts, the revenue days, the console's date fields and the command line's `--since` use.
public enum UTCDays {
    /// Days from 1970-01-01 to `year-month-day` (Howard Hinnant's `days_from_civil`).
    public static func daysSince1970(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date `days` after 1970-01-01 (Howard Hinnant's `civil_from_days`).
    public static func civil(days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthPrime = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthPrime + 2) / 5 + 1
        let month = monthPrime < 10 ? monthPrime + 3 : monthPrime - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Days from 1970-01-01 to a `YYYY-MM-DD` text; nil unless it is exactly that, a real date.
    public static func days(of text: some StringProtocol) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for index in range {
                let digit = bytes[index] &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                value = value * 10 + Int64(digit)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), (1...12).contains(month), day >= 1
        else { return nil }
        let days = daysSince1970(year: year, month: month, day: day)
        // A day past its month's end (2026-02-30) comes back as another date: refused.
        guard civil(days: days) == (year, month, day) else { return nil }
        return days
    }

    /// Midnight UTC starting `text` (`YYYY-MM-DD`), in milliseconds since 1970.
    public static func startMs(of text: some StringProtocol) -> Int64? {
        days(of: text).map { $0 * 86_400_000 }
    }
}

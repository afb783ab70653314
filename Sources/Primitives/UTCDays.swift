/// The one calendar: days in UTC on the proleptic Gregorian calendar, without Foundation's
/// calendars or formatters (slow, locale- and machine-dependent). Apple's date texts, the revenue
/// days, the console's date fields, the command line's `--since`, PostgreSQL's timestamps (years
/// before 1 included: year 0 is 1 BC) and the simulator's billing periods all count days here.
///
/// Day 0 is 1970-01-01; days before it are negative. The conversions are Howard Hinnant's
/// (http://howardhinnant.github.io/date_algorithms.html), exact on integers for every `Int64`
/// day a timestamp can hold.
public enum UTCDays {
    public static let millisecondsPerDay: Int64 = 86_400_000

    /// Days from 1970-01-01 to `year-month-day` (Hinnant's `days_from_civil`). `month` is 1…12;
    /// a `day` past its month's end counts on into the next month.
    public static func daysSince1970(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = floorDivide(y, by: 400).quotient
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date `days` after 1970-01-01 (Hinnant's `civil_from_days`).
    public static func civil(days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = floorDivide(z, by: 146_097).quotient
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthPrime = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthPrime + 2) / 5 + 1
        let month = monthPrime < 10 ? monthPrime + 3 : monthPrime - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Whether `year` has a February 29th.
    public static func isLeap(_ year: Int64) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    /// How many days `month` (1…12) of `year` has.
    public static func daysIn(month: Int64, of year: Int64) -> Int64 {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// `value` divided by a positive `divisor`, rounding towards minus infinity, and the
    /// remainder, never negative: an instant before 1970 falls on the day it is in, not the next.
    public static func floorDivide(_ value: Int64, by divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        let (quotient, remainder) = value.quotientAndRemainder(dividingBy: divisor)
        return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
    }

    /// The day of an instant in milliseconds since 1970, and the milliseconds since its midnight.
    public static func day(ofMilliseconds milliseconds: Int64) -> (days: Int64, millisecondOfDay: Int64) {
        let (days, inDay) = floorDivide(milliseconds, by: millisecondsPerDay)
        return (days, inDay)
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
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), (1...12).contains(month), day >= 1,
            day <= daysIn(month: month, of: year)
        else { return nil }
        return daysSince1970(year: year, month: month, day: day)
    }

    /// Midnight UTC starting `text` (`YYYY-MM-DD`), in milliseconds since 1970.
    public static func startMs(of text: some StringProtocol) -> Int64? {
        days(of: text).map { $0 * millisecondsPerDay }
    }
}

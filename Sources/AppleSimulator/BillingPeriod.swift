/// The length of one paid subscription period, in the units Apple sells them: days (a week is
/// 7) or calendar months (a year is 12).
///
/// Period ends are computed in UTC on the Gregorian calendar, always from the start of the run
/// of periods (the anchor) rather than from the previous end, so a month keeps the anchor's
/// day: bought Jan 31, a monthly plan renews Feb 29 (Feb 28 in a common year), Mar 31, Apr 30,
/// as Apple's do. The arithmetic is on integers, exact to the millisecond and independent of
/// Foundation's calendar, because it runs once per renewal while the clock advances.
enum BillingPeriod: Sendable, Hashable {
    case days(Int)
    case months(Int)

    private static let dayMs: Int64 = 86_400_000

    /// The end of the `count`-th period after `anchorMs` (milliseconds since 1970, UTC): the
    /// anchor itself for 0. Months keep the anchor's time of day and day of month, clamped to
    /// the last day of shorter months.
    func end(after count: Int, from anchorMs: Int64) -> Int64 {
        switch self {
        case .days(let days):
            return anchorMs + Int64(days) * Int64(count) * Self.dayMs
        case .months(let months):
            let day = Self.floorDivide(anchorMs, Self.dayMs)
            let timeOfDay = anchorMs - day * Self.dayMs
            let date = Self.civil(fromDays: day)
            let monthIndex = date.year * 12 + (date.month - 1) + Int64(months) * Int64(count)
            let year = Self.floorDivide(monthIndex, 12)
            let month = monthIndex - year * 12 + 1
            let clamped = min(date.day, Self.daysIn(month: month, of: year))
            return Self.days(fromYear: year, month: month, day: clamped) * Self.dayMs + timeOfDay
        }
    }

    // Howard Hinnant's `days_from_civil` / `civil_from_days` (proleptic Gregorian, day 0 is
    // 1970-01-01): http://howardhinnant.github.io/date_algorithms.html

    static func days(fromYear year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = floorDivide(y, 400)
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = floorDivide(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func daysIn(month: Int64, of year: Int64) -> Int64 {
        switch month {
        case 2:
            let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
            return leap ? 29 : 28
        case 4, 6, 9, 11:
            return 30
        default:
            return 31
        }
    }

    /// Division rounding towards minus infinity, so instants before 1970 fall on the right day.
    private static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        let quotient = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? quotient - 1 : quotient
    }
}

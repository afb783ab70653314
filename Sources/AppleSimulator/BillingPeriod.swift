import Primitives

/// The length of one paid subscription period, in the units Apple sells them: days (a week is
/// 7) or calendar months (a year is 12).
///
/// Period ends are computed in UTC on the Gregorian calendar, always from the start of the run
/// of periods (the anchor) rather than from the previous end, so a month keeps the anchor's
/// day: bought Jan 31, a monthly plan renews Feb 29 (Feb 28 in a common year), Mar 31, Apr 30,
/// as Apple's do. The arithmetic is on integers, exact to the millisecond and independent of
/// Foundation's calendar (`UTCDays`, the one calendar), because it runs once per renewal while the
/// clock advances.
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
            let (day, timeOfDay) = UTCDays.day(ofMilliseconds: anchorMs)
            let date = UTCDays.civil(days: day)
            let monthIndex = date.year * 12 + (date.month - 1) + Int64(months) * Int64(count)
            let (year, monthOfYear) = UTCDays.floorDivide(monthIndex, by: 12)
            let month = monthOfYear + 1
            let clamped = min(date.day, UTCDays.daysIn(month: month, of: year))
            return UTCDays.daysSince1970(year: year, month: month, day: clamped) * Self.dayMs + timeOfDay
        }
    }
}

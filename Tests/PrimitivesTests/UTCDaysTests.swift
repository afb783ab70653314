import Primitives
import Testing

/// The one calendar (issue 23: day formatting was written four times; issue 37: and the driver's
/// timestamps and the simulator's billing periods had calendars of their own).
@Suite("UTC days: the one calendar")
struct UTCDaysTests {
    @Test("YYYY-MM-DD texts become days since 1970, real dates only",
          arguments: [("1970-01-01", Int64(0)), ("2000-02-29", 11_016), ("2026-11-26", 20_783), ("1969-12-31", -1)])
    func days(_ text: String, _ expected: Int64) {
        #expect(UTCDays.days(of: text) == expected)
        #expect(UTCDays.startMs(of: text) == expected * 86_400_000)
    }

    @Test("anything else is refused", arguments: [
        "2026-02-30", "2025-02-29", "2100-02-29", "2026-13-01", "2026-00-10", "2026-04-31", "2026-01-00", "2026-1-01",
        "26-11-2026", "2026/11/26", "", "2026-11-26T00:00:00Z",
    ])
    func refused(_ text: String) {
        #expect(UTCDays.days(of: text) == nil)
    }

    @Test("days and dates convert both ways over four centuries")
    func roundTrip() {
        for days in stride(from: Int64(-146_097), through: 146_097, by: 7) {
            let (year, month, day) = UTCDays.civil(days: days)
            #expect(UTCDays.daysSince1970(year: year, month: month, day: day) == days)
        }
    }

    @Test("every day from 1896 to 2104 follows the one before it: leap days in 2000 and 2096, none in 1900 and 2100")
    func consecutiveDays() {
        var (year, month, day): (Int64, Int64, Int64) = (1896, 1, 1)
        let first = UTCDays.daysSince1970(year: 1896, month: 1, day: 1)
        var leapDays: [Int64] = []
        for days in first...UTCDays.daysSince1970(year: 2104, month: 12, day: 31) {
            let civil = UTCDays.civil(days: days)
            #expect(civil == (year, month, day), "day \(days)")
            if month == 2, day == 29 { leapDays.append(year) }
            if day < UTCDays.daysIn(month: month, of: year) {
                day += 1
            } else if month < 12 {
                (month, day) = (month + 1, 1)
            } else {
                (year, month, day) = (year + 1, 1, 1)
            }
        }
        #expect(leapDays.contains(2000) && leapDays.contains(2096) && leapDays.contains(1904))
        #expect(!leapDays.contains(1900) && !leapDays.contains(2100))
        #expect(leapDays.count == 51)
    }

    @Test("fixed points: 1970, 2000, 2100, and before 1970")
    func fixedPoints() {
        #expect(UTCDays.civil(days: 0) == (1970, 1, 1))
        #expect(UTCDays.civil(days: -1) == (1969, 12, 31))
        #expect(UTCDays.civil(days: -719_528) == (0, 1, 1))
        #expect(UTCDays.daysSince1970(year: 2000, month: 1, day: 1) == 10_957)
        #expect(UTCDays.daysSince1970(year: 2100, month: 3, day: 1) - UTCDays.daysSince1970(year: 2100, month: 2, day: 28) == 1)
        #expect(UTCDays.daysSince1970(year: 2000, month: 3, day: 1) - UTCDays.daysSince1970(year: 2000, month: 2, day: 28) == 2)
        // Year 0 is 1 BC in PostgreSQL's astronomical numbering, and a leap year.
        #expect(UTCDays.isLeap(0) && UTCDays.isLeap(-4) && !UTCDays.isLeap(-100))
        #expect(UTCDays.civil(days: UTCDays.daysSince1970(year: -4712, month: 1, day: 1)) == (-4712, 1, 1))
    }

    @Test("an instant falls on the day it is in, before 1970 too")
    func instants() {
        #expect(UTCDays.day(ofMilliseconds: 0) == (0, 0))
        #expect(UTCDays.day(ofMilliseconds: -1) == (-1, 86_399_999))
        #expect(UTCDays.day(ofMilliseconds: 86_400_000) == (1, 0))
        #expect(UTCDays.day(ofMilliseconds: -86_400_000) == (-1, 0))
        #expect(UTCDays.floorDivide(-13, by: 12) == (-2, 11))
        #expect(UTCDays.floorDivide(Int64.min, by: 86_400_000_000).remainder >= 0)
    }
}

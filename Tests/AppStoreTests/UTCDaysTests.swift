import AppStore
import Testing

/// The one calendar (issue 23: day formatting was written four times).
@Suite("UTC days: the one calendar")
struct UTCDaysTests {
    @Test("YYYY-MM-DD texts become days since 1970, real dates only",
          arguments: [("1970-01-01", Int64(0)), ("2000-02-29", 11_016), ("2026-11-26", 20_783), ("1969-12-31", -1)])
    func days(_ text: String, _ expected: Int64) {
        #expect(UTCDays.days(of: text) == expected)
        #expect(UTCDays.startMs(of: text) == expected * 86_400_000)
    }

    @Test("anything else is refused", arguments: ["2026-02-30", "2025-02-29", "2026-13-01", "2026-1-01", "26-11-2026", "2026/11/26", "", "2026-11-26T00:00:00Z"])
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
}

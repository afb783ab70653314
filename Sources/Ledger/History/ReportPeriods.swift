import Primitives

/// The periods a finance report is cut into: whole UTC days, ISO weeks (Monday to Sunday) or
/// calendar months, from the one holding `from` to the one holding `to`. A week or month is
/// reported whole even where `from` or `to` falls inside it, so a period's movement always
/// spans the same instants whatever range was asked.
public struct ReportPeriod: Sendable, Hashable {
    public enum Interval: String, Sendable, Hashable, CaseIterable {
        case day, week, month

        public static var listed: String { "day, week or month" }
    }

    /// `YYYY-MM-DD` for a day, the week's Monday for a week, `YYYY-MM` for a month.
    public var label: String
    /// `[startMs, endMs)`, milliseconds since 1970, UTC.
    public var startMs: Int64
    public var endMs: Int64
    /// The last instant of the period: a figure "at its end" is the state at this instant.
    public var lastMs: Int64 { endMs - 1 }

    public init(label: String, startMs: Int64, endMs: Int64) {
        self.label = label
        self.startMs = startMs
        self.endMs = endMs
    }

    /// The most periods one report answers: ten years by day.
    public static let limit = 3_700

    /// The periods covering `from` … `to` (`YYYY-MM-DD`, checked by the caller), in order.
    public static func covering(from: String, to: String, by interval: Interval) -> [ReportPeriod] {
        guard let first = UTCDays.days(of: from), let last = UTCDays.days(of: to), first <= last else { return [] }
        var out: [ReportPeriod] = []
        var start = days(holding: first, by: interval).start
        while start <= last, out.count < limit {
            let end = days(holding: start, by: interval).end
            let label: String
            switch interval {
            case .day, .week: label = dayLabel(start)
            case .month:
                let (y, m, _) = UTCDays.civil(days: start)
                label = "\(y)-\(two(m))"
            }
            out.append(ReportPeriod(label: label, startMs: start * UTCDays.millisecondsPerDay, endMs: end * UTCDays.millisecondsPerDay))
            start = end
        }
        return out
    }

    /// The first day of the period of `interval` holding `day` and the first day after it.
    public static func days(holding day: Int64, by interval: Interval) -> (start: Int64, end: Int64) {
        switch interval {
        case .day: return (day, day + 1)
        case .week:
            let monday = day - weekday(day)
            return (monday, monday + 7)
        case .month:
            let (y, m, _) = UTCDays.civil(days: day)
            let start = UTCDays.daysSince1970(year: y, month: m, day: 1)
            return (start, start + UTCDays.daysIn(month: m, of: y))
        }
    }

    /// 0 for a Monday … 6 for a Sunday (1970-01-01 was a Thursday).
    static func weekday(_ days: Int64) -> Int64 { ((days + 3) % 7 + 7) % 7 }

    static func dayLabel(_ days: Int64) -> String { RevenueDay.of(days * UTCDays.millisecondsPerDay) }

    private static func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
}

import Foundation

/// Days in Pacific time, as App Store Connect's reports for worldwide agreements count them.
public enum PacificDay {
    static let zone = TimeZone(identifier: "America/Los_Angeles")!

    static var calendar: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return calendar
    }

    /// `YYYY-MM-DD` in Pacific time of an instant in ms since 1970.
    public static func of(_ ms: Int64) -> String {
        let c = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: TimeInterval(ms) / 1000))
        return String(format: "%04d-%02d-%02d", c.year ?? 1970, c.month ?? 1, c.day ?? 1)
    }

    /// Midnight Pacific time starting `day` (`YYYY-MM-DD`), in ms since 1970.
    public static func startMs(of day: String) -> Int64? {
        let parts = day.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3 else { return nil }
        guard let date = calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2])) else { return nil }
        return Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    /// Midnight Pacific time ending `day`: the next day's start (a DST day is 23 or 25 hours).
    public static func endMs(of day: String) -> Int64? {
        guard let start = startMs(of: day),
              let next = calendar.date(byAdding: .day, value: 1, to: Date(timeIntervalSince1970: TimeInterval(start) / 1000))
        else { return nil }
        return Int64((next.timeIntervalSince1970 * 1000).rounded())
    }
}

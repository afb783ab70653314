import Foundation

/// Apple's three spellings of one instant in verifyReceipt bodies.
///
/// For `purchase_date` Apple sends `purchase_date` ("2016-06-17 01:32:28 Etc/GMT"),
/// `purchase_date_ms` ("1466127148000", milliseconds since 1970, UTC) and `purchase_date_pst`
/// ("2016-06-16 18:32:28 America/Los_Angeles"); see the fixtures in shared/fixtures/apple.
enum AppleDateFormat {
    private static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .gmt
        return calendar
    }()

    private static let pacific = TimeZone(identifier: "America/Los_Angeles")

    /// "2016-06-17 01:32:28 Etc/GMT" for `milliseconds` since 1970 (UTC).
    static func gmt(_ milliseconds: Int64) -> String {
        format(milliseconds, offsetSeconds: 0) + " Etc/GMT"
    }

    /// "2016-06-16 18:32:28 America/Los_Angeles" for `milliseconds` since 1970 (UTC).
    static func pst(_ milliseconds: Int64) -> String {
        let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        let offset = pacific?.secondsFromGMT(for: date) ?? -8 * 3600
        return format(milliseconds, offsetSeconds: offset) + " America/Los_Angeles"
    }

    private static func format(_ milliseconds: Int64, offsetSeconds: Int) -> String {
        // Floor to whole seconds, as Apple's strings carry no fraction.
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        let date = Date(timeIntervalSince1970: Double(seconds + Int64(offsetSeconds)))
        let c = utc.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ value: Int?) -> String {
            let v = value ?? 0
            return v < 10 ? "0\(v)" : "\(v)"
        }
        return "\(c.year ?? 1970)-\(two(c.month))-\(two(c.day)) \(two(c.hour)):\(two(c.minute)):\(two(c.second))"
    }
}

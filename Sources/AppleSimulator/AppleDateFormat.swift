import Foundation
import Primitives

/// Apple's three spellings of one instant in verifyReceipt bodies.
///
/// For `purchase_date` Apple sends `purchase_date` ("2016-06-17 01:32:28 Etc/GMT"),
/// `purchase_date_ms` ("1466127148000", milliseconds since 1970, UTC) and `purchase_date_pst`
/// ("2016-06-16 18:32:28 America/Los_Angeles"); see the fixtures in shared/fixtures/apple.
enum AppleDateFormat {
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
        let seconds = UTCDays.floorDivide(milliseconds, by: 1000).quotient + Int64(offsetSeconds)
        let (days, secondOfDay) = UTCDays.floorDivide(seconds, by: 86_400)
        let (year, month, day) = UTCDays.civil(days: days)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(year)-\(two(month))-\(two(day)) \(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60))"
    }
}

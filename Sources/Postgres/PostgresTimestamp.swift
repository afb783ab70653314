import Foundation
import Primitives

/// An instant as PostgreSQL's `timestamptz` holds it: microseconds since 1970-01-01 00:00:00 UTC,
/// exact (no floating-point rounding). `Int64.max`/`Int64.min` stand for `infinity`/`-infinity`.
public struct PostgresTimestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Microseconds since the Unix epoch, UTC.
    public var microsecondsSince1970: Int64

    public init(microsecondsSince1970: Int64) {
        self.microsecondsSince1970 = microsecondsSince1970
    }

    /// The instant of a `Date`, rounded to the nearest microsecond.
    public init(_ date: Date) {
        let sinceReference = (date.timeIntervalSinceReferenceDate * 1_000_000).rounded()
        self.microsecondsSince1970 = Int64(sinceReference) + Self.referenceDateOffset
    }

    public static let infinity = PostgresTimestamp(microsecondsSince1970: .max)
    public static let negativeInfinity = PostgresTimestamp(microsecondsSince1970: .min)

    /// 2001-01-01 (Foundation's reference date) in microseconds since 1970.
    static let referenceDateOffset: Int64 = 978_307_200_000_000
    static let microsecondsPerDay: Int64 = 86_400_000_000

    /// The nearest `Date`; infinities become `Date.distantFuture`/`Date.distantPast`.
    public var date: Date {
        if self == .infinity { return .distantFuture }
        if self == .negativeInfinity { return .distantPast }
        return Date(timeIntervalSinceReferenceDate: Double(microsecondsSince1970 - Self.referenceDateOffset) / 1_000_000)
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        lhs.microsecondsSince1970 < rhs.microsecondsSince1970
    }

    /// PostgreSQL's ISO text form in UTC: `2024-05-06 07:08:09.123456+00` (`… BC` before year 1).
    public var description: String {
        if self == .infinity { return "infinity" }
        if self == .negativeInfinity { return "-infinity" }
        let (days, inDay) = UTCDays.floorDivide(microsecondsSince1970, by: Self.microsecondsPerDay)
        let (year, month, day) = UTCDays.civil(days: days)
        let seconds = inDay / 1_000_000
        let micros = inDay % 1_000_000
        func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let displayYear = year > 0 ? year : 1 - year
        var text = "\(pad(displayYear, 4))-\(pad(month, 2))-\(pad(day, 2)) "
        text += "\(pad(seconds / 3600, 2)):\(pad(seconds / 60 % 60, 2)):\(pad(seconds % 60, 2))"
        text += ".\(pad(micros, 6))+00"
        if year <= 0 { text += " BC" }
        return text
    }

    /// Parses PostgreSQL's ISO output for `timestamptz` or `timestamp` (taken as UTC): any
    /// UTC offset (`+05:30`, `-03`, `+01:02:03`), 0–6 fractional digits, `BC`, infinities.
    public init?(postgresText text: some Collection<UInt8>) {
        var parser = TimestampParser(Array(text))
        guard let value = parser.parse() else { return nil }
        self.microsecondsSince1970 = value
    }
}

private struct TimestampParser {
    let bytes: [UInt8]
    var index = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func parse() -> Int64? {
        let text = String(decoding: bytes, as: UTF8.self)
        if text == "infinity" { return .max }
        if text == "-infinity" { return .min }
        guard let year = number(minDigits: 4, maxDigits: 7), take("-"),
            let month = number(minDigits: 2, maxDigits: 2), take("-"),
            let day = number(minDigits: 2, maxDigits: 2), take(" ") || take("T"),
            let hour = number(minDigits: 2, maxDigits: 2), take(":"),
            let minute = number(minDigits: 2, maxDigits: 2), take(":"),
            let second = number(minDigits: 2, maxDigits: 2),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var micros: Int64 = 0
        if take(".") {
            var digits = 0
            while index < bytes.count, let digit = digitValue(bytes[index]) {
                guard digits < 6 else { return nil }  // PostgreSQL never prints more than 6
                micros = micros * 10 + digit
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<6 { micros *= 10 }
        }
        var offsetSeconds: Int64 = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
            let sign: Int64 = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let hours = number(minDigits: 2, maxDigits: 2) else { return nil }
            var total = hours * 3600
            if take(":") {
                guard let minutes = number(minDigits: 2, maxDigits: 2) else { return nil }
                total += minutes * 60
                if take(":") {
                    guard let seconds = number(minDigits: 2, maxDigits: 2) else { return nil }
                    total += seconds
                }
            }
            offsetSeconds = sign * total
        }
        var astronomicalYear = year
        if take(" ") {
            guard take("B"), take("C") else { return nil }
            astronomicalYear = 1 - year
        }
        guard index == bytes.count else { return nil }
        let days = UTCDays.daysSince1970(year: astronomicalYear, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        return seconds * 1_000_000 + micros
    }

    func digitValue(_ byte: UInt8) -> Int64? {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") ? Int64(byte - UInt8(ascii: "0")) : nil
    }

    mutating func number(minDigits: Int, maxDigits: Int) -> Int64? {
        var value: Int64 = 0
        var count = 0
        while index < bytes.count, count < maxDigits, let digit = digitValue(bytes[index]) {
            value = value * 10 + digit
            count += 1
            index += 1
        }
        return count >= minDigits ? value : nil
    }

    mutating func take(_ character: Unicode.Scalar) -> Bool {
        guard index < bytes.count, bytes[index] == UInt8(ascii: character) else { return false }
        index += 1
        return true
    }
}

extension PostgresTimestamp: PostgresEncodable, PostgresDecodable {
    public static var postgresType: PostgresType { .timestamptz }
    public var postgresData: PostgresData { PostgresData(type: .timestamptz, text: description) }
    public init(postgresCell cell: PostgresCell) throws {
        if cell.format == .binary {
            self = try cell.binaryTimestamp()
            return
        }
        guard let value = PostgresTimestamp(postgresText: try cell.requireBytes(for: PostgresTimestamp.self)) else {
            throw cell.decodingError(PostgresTimestamp.self, "not an ISO timestamp")
        }
        self = value
    }
}

extension Date: PostgresEncodable, PostgresDecodable {
    public static var postgresType: PostgresType { .timestamptz }
    /// timestamptz, rounded to the microsecond (PostgreSQL's precision).
    public var postgresData: PostgresData { PostgresTimestamp(self).postgresData }
    /// Parsed exactly from the text form, then converted once to the nearest `Date`.
    public init(postgresCell cell: PostgresCell) throws {
        self = try PostgresTimestamp(postgresCell: cell).date
    }
}

import Foundation

/// A coding key for any string, so a type can walk every key of an object once, decode what it
/// models and keep the rest in `unknownFields` (and the ledger's JSON decoder can name keys).
public struct AnyKey: CodingKey, Sendable {
    public var stringValue: String
    public var intValue: Int? { nil }
    public init(_ string: String) { self.stringValue = string }
    public init?(stringValue: String) { self.stringValue = stringValue }
    public init?(intValue: Int) { return nil }
}

/// Apple's verifyReceipt sends every scalar as a string (`"1466127148000"`, `"false"`), some
/// bodies carry numbers and booleans instead: these accept both. Strings are tried first because
/// they are what Apple sends, and a failed attempt costs a thrown error.
extension KeyedDecodingContainer where Key == AnyKey {
    /// A string, or a number or boolean written as its JSON text.
    func lenientString(_ key: AnyKey) throws -> String? {
        if try decodeNil(forKey: key) { return nil }
        if let value = try? decode(String.self, forKey: key) { return value }
        if let value = try? decode(Int64.self, forKey: key) { return String(value) }
        if let value = try? decode(Bool.self, forKey: key) { return String(value) }
        throw DecodingError.typeMismatch(String.self, .init(codingPath: codingPath + [key], debugDescription: "not a scalar"))
    }

    /// An integer from `"123"` or `123`; nil for null or an empty string.
    func lenientInt64(_ key: AnyKey) throws -> Int64? {
        if try decodeNil(forKey: key) { return nil }
        if let text = try? decode(String.self, forKey: key) {
            if text.isEmpty { return nil }
            if let value = Int64(text) { return value }
            throw DecodingError.typeMismatch(Int64.self, .init(codingPath: codingPath + [key], debugDescription: "not an integer string"))
        }
        return try decode(Int64.self, forKey: key)
    }

    /// A boolean from `"true"`/`"false"`, `"1"`/`"0"`, `true`/`false` or `1`/`0`.
    func lenientBool(_ key: AnyKey) throws -> Bool? {
        if try decodeNil(forKey: key) { return nil }
        if let text = try? decode(String.self, forKey: key) {
            switch text.lowercased() {
            case "true", "1", "yes": return true
            case "false", "0", "no": return false
            case "": return nil
            default:
                throw DecodingError.typeMismatch(Bool.self, .init(codingPath: codingPath + [key], debugDescription: "not a boolean string"))
            }
        }
        if let value = try? decode(Bool.self, forKey: key) { return value }
        return try decode(Int64.self, forKey: key) != 0
    }

    /// A date as milliseconds since 1970 UTC, from a millisecond number or string, or from
    /// Apple's `"2016-06-17 01:37:28 Etc/GMT"` text (iOS 7 bodies with no `_ms` twin).
    func lenientMilliseconds(_ key: AnyKey) throws -> Int64? {
        if try decodeNil(forKey: key) { return nil }
        if let text = try? decode(String.self, forKey: key) {
            if text.isEmpty { return nil }
            if let value = Int64(text) { return value }
            if let value = AppleDate.milliseconds(fromGMT: text) { return value }
            throw DecodingError.typeMismatch(Int64.self, .init(codingPath: codingPath + [key], debugDescription: "not a date"))
        }
        return try decode(Int64.self, forKey: key)
    }

    /// The error for a required key that is absent.
    func missing(_ name: String) -> DecodingError {
        .keyNotFound(AnyKey(name), .init(codingPath: codingPath, debugDescription: "required"))
    }

    /// The value as it came, for `unknownFields`.
    func json(_ key: AnyKey) throws -> JSONValue {
        try decode(JSONValue.self, forKey: key)
    }
}

/// Apple's date texts, read without `DateFormatter` (slow, locale-dependent).
enum AppleDate {
    /// Milliseconds from a date field's text: a millisecond number (iOS 6 style `expires_date`)
    /// or `"... Etc/GMT"`; nil for an absent, empty or unreadable text.
    static func milliseconds(fromText text: String?) -> Int64? {
        guard let text, !text.isEmpty else { return nil }
        return Int64(text) ?? milliseconds(fromGMT: text)
    }

    /// Milliseconds since 1970 for `"yyyy-MM-dd HH:mm:ss Etc/GMT"` (also `Etc\/GMT` after JSON
    /// unescaping, and `GMT`/`UTC`); nil for anything else, such as the `_pst` variants.
    static func milliseconds(fromGMT text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 19, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              bytes[10] == UInt8(ascii: " "), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":")
        else { return nil }
        let zone = String(decoding: bytes[19...], as: UTF8.self).trimmingCharacters(in: .whitespaces)
        guard ["Etc/GMT", "GMT", "UTC", "Etc/UTC"].contains(zone) else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for index in range {
                let digit = bytes[index] &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                value = value * 10 + Int64(digit)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        let days = daysSince1970(year: year, month: month, day: day)
        return ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000
    }

    /// Days from 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant's `days_from_civil`).
    static func daysSince1970(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

import Foundation
import Primitives

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

/// Dates in signed payloads (JWS): Apple signs whole milliseconds, Xcode's StoreKit testing signs
/// numbers with a fraction of a millisecond (`1697679936049.7297`), which Apple's libraries read
/// as dates. Both are read here, the fraction dropped as `Millis` drops it (a time is never
/// reported later than it happened).
extension KeyedDecodingContainer {
    /// Milliseconds since 1970 (UTC) from an integer or a number with a fraction, rounded down;
    /// nil when the key is absent or null. Any other value (a string, a number beyond 64 bits)
    /// is a type mismatch.
    func decodeMillisecondsIfPresent(forKey key: Key) throws -> Int64? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        if let value = try? decode(Int64.self, forKey: key) { return value }
        let value = try decode(Double.self, forKey: key)
        guard value.isFinite, let milliseconds = Int64(exactly: value.rounded(.down)) else {
            throw DecodingError.typeMismatch(
                Int64.self, .init(codingPath: codingPath + [key], debugDescription: "not a date in milliseconds"))
        }
        return milliseconds
    }

    /// An integer from a JSON number or a numeric string (`"12"`), as the blocks Apple added
    /// late (commitment info) are read: Apple's own libraries lagged behind them and read their
    /// numbers flexibly. nil when the key is absent, null or an empty string; anything else is a
    /// type mismatch.
    func decodeIntegerIfPresent(forKey key: Key) throws -> Int64? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        if let value = try? decode(Int64.self, forKey: key) { return value }
        if let text = try? decode(String.self, forKey: key) {
            if text.isEmpty { return nil }
            if let value = Int64(text) { return value }
        }
        throw DecodingError.typeMismatch(Int64.self, .init(codingPath: codingPath + [key], debugDescription: "not an integer"))
    }

    /// `decodeMillisecondsIfPresent`, also from milliseconds written as a numeric string.
    func decodeMillisecondsOrTextIfPresent(forKey key: Key) throws -> Int64? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        if let text = try? decode(String.self, forKey: key) {
            if text.isEmpty { return nil }
            guard let value = Int64(text) else {
                throw DecodingError.typeMismatch(
                    Int64.self, .init(codingPath: codingPath + [key], debugDescription: "not a date in milliseconds"))
            }
            return value
        }
        return try decodeMillisecondsIfPresent(forKey: key)
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
        let days = UTCDays.daysSince1970(year: year, month: month, day: day)
        return ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000
    }

}

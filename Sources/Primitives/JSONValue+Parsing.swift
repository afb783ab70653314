/// Reading JSON into a `JSONValue` without `JSONDecoder`, for the common case.
///
/// A timeline shows each entry's payload as a `JSONValue`. Through `JSONDecoder` that took 43 µs
/// a payload: `JSONValue.init(from:)` tries each type in turn, and every miss builds a
/// `DecodingError`. A user's timeline of 400 entries spent 17 ms there (perf, 2026-11-26).
/// This reader handles what payloads hold (strings, integers, flags, nulls, arrays, objects) and
/// gives up, returning nil, on anything where its answer could differ from the decoder's:
/// - a fraction or an exponent (the decoder makes `1.0` an integer and `1.5` a number);
/// - an integer beyond 64 bits;
/// - a repeated key (the decoder keeps the first);
/// - half a surrogate pair, or bytes that are not UTF-8;
/// - a control character inside a string, or nesting past 64 levels;
/// - anything that is not JSON.
///
/// The caller then asks the decoder, so the result is always the decoder's. A test holds the two
/// equal.
extension JSONValue {
    /// The value `JSONDecoder` would decode from `bytes`, or nil when this reader leaves it to
    /// the decoder.
    public static func parsedQuickly(_ bytes: [UInt8]) -> JSONValue? {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = QuickReader(bytes: buffer)
            guard let value = reader.value(depth: 0) else { return nil }
            reader.skipSpace()
            return reader.index == buffer.count ? value : nil
        }
    }
}

private struct QuickReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): index += 1
            default: return
            }
        }
    }

    mutating func value(depth: Int) -> JSONValue? {
        guard depth < 64 else { return nil }
        skipSpace()
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "\""): return string().map(JSONValue.string)
        case UInt8(ascii: "{"): return object(depth: depth)
        case UInt8(ascii: "["): return array(depth: depth)
        case UInt8(ascii: "t"): return literal("true", .bool(true))
        case UInt8(ascii: "f"): return literal("false", .bool(false))
        case UInt8(ascii: "n"): return literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return integer()
        default: return nil
        }
    }

    mutating func literal(_ word: StaticString, _ value: JSONValue) -> JSONValue? {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { return nil }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return nil }
        index += count
        return value
    }

    /// A plain integer (`-`, then `0` or digits not starting with `0`) that fits 64 bits.
    mutating func integer() -> JSONValue? {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        let digits = index
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
        guard index > digits, !(bytes[digits] == UInt8(ascii: "0") && index - digits > 1) else { return nil }
        if index < bytes.count, [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[index]) { return nil }
        guard let text = String(validating: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self),
              let number = Int64(text) else { return nil }
        return .integer(number)
    }

    mutating func string() -> String? {
        index += 1
        let start = index
        // Without escapes, the bytes between the quotes are the string.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                defer { index += 1 }
                return String(validating: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { return nil }
            index += 1
        }
        var out = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""): return String(validating: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { return nil }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    guard let unit = hex4() else { return nil }
                    var scalarValue = UInt32(unit)
                    if (0xD800...0xDBFF).contains(unit) {
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else { return nil }
                        index += 2
                        guard let low = hex4(), (0xDC00...0xDFFF).contains(low) else { return nil }
                        scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(unit) {
                        return nil
                    }
                    guard let scalar = Unicode.Scalar(scalarValue) else { return nil }
                    out += String(Character(scalar)).utf8
                default: return nil
                }
            default:
                if byte < 0x20 { return nil }
                out.append(byte)
            }
        }
        return nil
    }

    mutating func hex4() -> UInt16? {
        guard index + 4 <= bytes.count else { return nil }
        var unit: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            index += 1
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            unit = unit << 4 | UInt16(digit)
        }
        return unit
    }

    mutating func array(depth: Int) -> JSONValue? {
        index += 1
        var values: [JSONValue] = []
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(values)
        }
        while true {
            guard let element = value(depth: depth + 1) else { return nil }
            values.append(element)
            skipSpace()
            guard index < bytes.count else { return nil }
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: "]") { return .array(values) }
            guard byte == UInt8(ascii: ",") else { return nil }
        }
    }

    mutating func object(depth: Int) -> JSONValue? {
        index += 1
        var members: [String: JSONValue] = [:]
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\""), let key = string() else { return nil }
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
            index += 1
            guard let member = value(depth: depth + 1), members.updateValue(member, forKey: key) == nil else { return nil }
            skipSpace()
            guard index < bytes.count else { return nil }
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: "}") { return .object(members) }
            guard byte == UInt8(ascii: ",") else { return nil }
        }
    }
}

#if canImport(FoundationEssentials)
// Foundation's core alone (no ICU): `Date`, `Data` and `JSONEncoder` are all this module takes.
import FoundationEssentials
#else
import Foundation
#endif

/// Writing a JSON value as compact or pretty JSON with sorted keys, without `JSONEncoder`.
///
/// Webhook bodies are written this way, one per message, and a rebuild writes every message of
/// the log: through `JSONEncoder` (a boxed container per value, a dictionary copy per object)
/// their bodies were 15% of a rebuild's CPU (perf, 2026-11-26). The bytes must stay exactly
/// those `JSONEncoder` wrote with `[.sortedKeys, .withoutEscapingSlashes]`, since bodies already
/// stored and signed were written so and a replay must make the same ones: the rules below are
/// that encoder's, and a test holds the two equal over every character class and key order.
extension JSONValue {
    /// The value as `JSONEncoder` with `[.sortedKeys, .withoutEscapingSlashes]` writes it. A
    /// fractional number's text is that encoder's own business, so a value holding one is
    /// handed to the encoder (no message holds one today).
    public func sortedCompactJSON() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        return Self.write(self, pretty: false, indent: 0, into: &out) ? out : Self.encoded(self, by: Self.compactEncoder)
    }

    /// The same with `.prettyPrinted` added: two spaces per level, `"key" : value`, and an empty
    /// container's brackets on lines of their own with an empty line between. The console prints
    /// each timeline entry's data so; a new encoder per entry was 47 ms of a 400-entry page.
    public func sortedPrettyJSON() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(512)
        return Self.write(self, pretty: true, indent: 0, into: &out) ? out : Self.encoded(self, by: Self.prettyEncoder)
    }

    private static let compactEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    private static let prettyEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// Encoding a JSONValue cannot fail but for a non-finite number, which JSON cannot hold.
    private static func encoded(_ value: JSONValue, by encoder: JSONEncoder) -> [UInt8] {
        (try? encoder.encode(value)).map { Array($0) } ?? Array("null".utf8)
    }

    private static func write(_ value: JSONValue, pretty: Bool, indent: Int, into out: inout [UInt8]) -> Bool {
        func open(_ bracket: UInt8) {
            out.append(bracket)
            if pretty { out.append(UInt8(ascii: "\n")) }
        }
        func separate() {
            out.append(UInt8(ascii: ","))
            if pretty { out.append(UInt8(ascii: "\n")) }
        }
        func close(_ bracket: UInt8) {
            if pretty {
                // After the last member, or after `open`'s line break when there is none: the
                // encoder leaves an empty line between an empty container's brackets.
                out.append(UInt8(ascii: "\n"))
                out += repeatElement(UInt8(ascii: " "), count: indent)
            }
            out.append(bracket)
        }
        func pad() { if pretty { out += repeatElement(UInt8(ascii: " "), count: indent + 2) } }
        switch value {
        case .null: out += "null".utf8
        case .bool(let flag): out += (flag ? "true" : "false").utf8
        case .integer(let number): out += String(number).utf8
        case .number: return false
        case .string(let text): writeString(text, into: &out)
        case .array(let values):
            open(UInt8(ascii: "["))
            for (index, element) in values.enumerated() {
                if index > 0 { separate() }
                pad()
                guard write(element, pretty: pretty, indent: indent + 2, into: &out) else { return false }
            }
            close(UInt8(ascii: "]"))
        case .object(let members):
            open(UInt8(ascii: "{"))
            // JSONEncoder's `.sortedKeys` orders keys by their UTF-8 bytes.
            let keys = members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            for (index, key) in keys.enumerated() {
                if index > 0 { separate() }
                pad()
                writeString(key, into: &out)
                out += pretty ? " : ".utf8 : ":".utf8
                guard let member = members[key], write(member, pretty: pretty, indent: indent + 2, into: &out) else { return false }
            }
            close(UInt8(ascii: "}"))
        }
        return true
    }

    private static func writeString(_ text: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        writeStringContent(text, into: &out)
        out.append(UInt8(ascii: "\""))
    }

    /// `text` as the inside of a JSON string, with JSONEncoder's escapes: quote and backslash,
    /// the five short control escapes, other control characters as lowercase `\u00xx`;
    /// everything else (slashes, DEL, U+2028) as is. Also for text put into JSON already written.
    public static func writeStringContent(_ text: String, into out: inout [UInt8]) {
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(UInt8(ascii: "\\")); out.append(byte)
            case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\")); out.append(byte)
            case 0x08: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "b"))
            case 0x09: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "t"))
            case 0x0A: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "n"))
            case 0x0C: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "f"))
            case 0x0D: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "r"))
            case 0..<0x20:
                out += "\\u00".utf8
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            default: out.append(byte)
            }
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}

import Foundation
import Primitives
import Testing

/// Webhook bodies already stored and signed were written by `JSONEncoder`; the writer that
/// replaced it must give the same bytes, or a replay would change every body.
@Suite("JSON written without JSONEncoder, compact and pretty: the encoder's bytes exactly")
struct JSONValueSortedCompactTests {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    static let prettyEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    static func encoded(_ value: JSONValue) throws -> [UInt8] { Array(try encoder.encode(value)) }
    static func pretty(_ value: JSONValue) throws -> [UInt8] { Array(try prettyEncoder.encode(value)) }

    @Test("every ASCII character, escapes and multi-byte text in keys and values")
    func characters() throws {
        var every = ""
        for byte in 1..<0x80 { every.unicodeScalars.append(Unicode.Scalar(UInt8(byte))) }
        every += "é€😀\u{2028}\u{2029}\u{85}ß"
        let value: JSONValue = .object([every: .string(every), "nul": .string("a\u{0}b"), "slash": .string("a/b\\c")])
        #expect(value.sortedCompactJSON() == (try Self.encoded(value)))
        #expect(value.sortedPrettyJSON() == (try Self.pretty(value)))
    }

    @Test("keys sorted as the encoder sorts them: case, digits, underscores, non-ASCII")
    func keyOrder() throws {
        let keys = ["a_b", "aB", "ab", "a10", "a9", "A", "Z_", "é", "e", "f", "ß", "ss", "user_id", "username", "", "_", "0"]
        let value: JSONValue = .object(Dictionary(uniqueKeysWithValues: keys.map { ($0, JSONValue.string($0)) }))
        #expect(value.sortedCompactJSON() == (try Self.encoded(value)))
        #expect(value.sortedPrettyJSON() == (try Self.pretty(value)))
    }

    @Test("random nested values of nulls, flags, integers, strings, arrays and objects, written and read back")
    func random() throws {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("aZ_09 \"\\/\t\n\u{1}é😀-.")
        func text() -> String { String((0..<Int.random(in: 0...6, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }) }
        func value(_ depth: Int) -> JSONValue {
            switch Int.random(in: 0..<(depth > 3 ? 4 : 6), using: &generator) {
            case 0: return .null
            case 1: return .bool(Bool.random(using: &generator))
            case 2: return .integer([Int64.min, Int64.max, 0, -1, Int64.random(in: -1_000_000...1_000_000, using: &generator)].randomElement(using: &generator)!)
            case 3: return .string(text())
            case 4: return .array((0..<Int.random(in: 0...4, using: &generator)).map { _ in value(depth + 1) })
            default:
                var members: [String: JSONValue] = [:]
                for _ in 0..<Int.random(in: 0...5, using: &generator) { members[text()] = value(depth + 1) }
                return .object(members)
            }
        }
        for _ in 0..<2_000 {
            let sample = value(0)
            #expect(sample.sortedCompactJSON() == (try Self.encoded(sample)), "\(sample)")
            #expect(sample.sortedPrettyJSON() == (try Self.pretty(sample)), "\(sample)")
            // And read back without the decoder (JSONValue+Parsing), as the decoder reads them.
            for bytes in [sample.sortedCompactJSON(), sample.sortedPrettyJSON()] {
                #expect(JSONValue.parsedQuickly(bytes) == sample)
                #expect(try JSONDecoder().decode(JSONValue.self, from: Data(bytes)) == sample)
            }
        }
    }

    @Test("a fractional number is written by the encoder itself")
    func fractions() throws {
        for value: JSONValue in [.object(["price": .number(0.99)]), .array([.integer(1), .number(1.5)]), .object(["a": .array([.number(1e20)])])] {
            #expect(value.sortedCompactJSON() == (try Self.encoded(value)))
            #expect(value.sortedPrettyJSON() == (try Self.pretty(value)))
        }
    }
}

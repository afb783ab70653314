import AppStore
import Foundation
import Testing

@testable import Ledger

/// A timeline's entries show payloads read by `JSONValue.parsedQuickly`, or by the ledger's
/// decoder when it declines: whenever it answers, its answer must be the decoder's.
@Suite("JSON read into a JSONValue without JSONDecoder: the decoder's value, or nothing")
struct JSONValueQuickReadTests {
    static func decoded(_ bytes: [UInt8]) -> JSONValue? { try? LedgerJSON.decoder.decode(JSONValue.self, from: Data(bytes)) }

    /// Either the reader declines, or it gives what the decoder gives (and the decoder accepts).
    static func agrees(_ bytes: [UInt8]) -> Bool {
        guard let quick = JSONValue.parsedQuickly(bytes) else { return true }
        return quick == decoded(bytes)
    }

    @Test("every event's stored payload reads as the decoder reads it, without declining")
    func payloads() throws {
        for event in LedgerEventRoundTripTests.examples {
            let payload = Array(try #require(event.payload).encoded())
            #expect(JSONValue.parsedQuickly(payload) != nil, "\(event.type)")
            #expect(JSONValue.parsedQuickly(payload) == Self.decoded(payload), "\(event.type)")
        }
    }

    @Test("Apple's real bodies: read as the decoder reads them, or declined")
    func appleBodies() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: AppleFixtures.directory.path).filter { $0.hasSuffix(".json") }
        #expect(files.count > 20)
        var read = 0
        for file in files {
            let bytes = Array(try AppleFixtures.data(file))
            #expect(Self.agrees(bytes), "\(file)")
            if JSONValue.parsedQuickly(bytes) != nil { read += 1 }
        }
        #expect(read > files.count / 2, "most bodies are read without the decoder")
    }

    @Test("edge cases: numbers, escapes, repeated keys, bad UTF-8, bad JSON")
    func edges() {
        let answered: [String] = [
            "0", "-0", "7", " 7 ", "9223372036854775807", "-9223372036854775808", "true", "false", "null", "\"\"", "[]", "{}",
            "[1,[2,[3,{}]]]", "{\"a\":{\"b_c\":[null,true]}}", "\"\\u00e9\\/\\\\\\\"\\b\\f\\n\\r\\t\"", "\"\\ud83d\\ude00\"", "\"é😀\"",
            "{\"camelCase\":1,\"snake_case\":2}", "\"\\u0000\"", " \t\n\r{ \"a\" : 1 , \"b\" : [ ] } ",
        ]
        for text in answered {
            #expect(JSONValue.parsedQuickly(Array(text.utf8)) != nil, "\(text)")
            #expect(JSONValue.parsedQuickly(Array(text.utf8)) == Self.decoded(Array(text.utf8)), "\(text)")
        }
        let declined: [String] = [
            "1.0", "1e2", "1.5", "-0.0", "9223372036854775808", "12345678901234567890", "1E400", "01", "+1", "-", "",
            "{\"a\":1,\"a\":2}", "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"", "\"\\x\"", "\"a\nb\"", "[1,]", "{\"a\":1,}", "[1 2]",
            "tru", "nul", "\"open", "{\"a\" 1}", "[1]]", "{} {}", String(repeating: "[", count: 100) + String(repeating: "]", count: 100),
        ]
        for text in declined {
            #expect(JSONValue.parsedQuickly(Array(text.utf8)) == nil, "\(text)")
        }
        #expect(JSONValue.parsedQuickly([0x22, 0xFF, 0x22]) == nil, "not UTF-8")
        #expect(JSONValue.parsedQuickly([0x22, 0xC3, 0x22]) == nil, "a cut UTF-8 sequence")
    }

    @Test("random nested values, written compact and pretty, read back as the decoder reads them")
    func random() throws {
        var generator = SplitMix64(seed: 27)
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
            for bytes in [sample.sortedCompactJSON(), sample.sortedPrettyJSON()].compactMap({ $0 }) {
                #expect(JSONValue.parsedQuickly(bytes) == sample, "\(String(decoding: bytes, as: UTF8.self))")
                #expect(Self.decoded(bytes) == sample)
            }
        }
    }
}

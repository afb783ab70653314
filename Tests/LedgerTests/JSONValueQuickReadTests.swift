import Foundation
import Primitives
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
}

import Foundation
import Primitives
import Testing

@testable import Ledger

/// Rebuilds and timelines decode payloads through `PayloadValueDecoding` when it answers: its
/// answer must be `LedgerJSON.decoder`'s, and where it cannot be sure it must not answer.
@Suite("Payloads decoded from the quick reader's value: the decoder's event, or nothing")
struct PayloadValueDecoderTests {
    @Test("every event type's payload decodes without the decoder, to the decoder's event")
    func everyEventType() throws {
        var types: Set<String> = []
        for event in LedgerEventRoundTripTests.examples {
            let bytes = Array(try #require(event.payload).encoded())
            let value = try #require(JSONValue.parsedQuickly(bytes))
            let quick = LedgerEvent.decodedQuickly(type: event.type, value: value)
            #expect(quick != nil, "\(event.type) fell back to the decoder")
            #expect(quick == event, "\(event.type)")
            #expect(try LedgerEvent(type: event.type, bytes: bytes) == event)
            #expect(try LedgerEvent.decodedByDecoder(type: event.type, payload: Data(bytes)) == event)
            types.insert(event.type)
        }
        // The round trip's 24 examples; every other type is held to the decoder on the events
        // each HTTP test recorded (LedgerHarness.expectPayloadsReadQuickly).
        #expect(types.count == 24)
    }

    @Test("a field of the wrong type, a missing field, a number out of range: no answer here, the decoder's error from LedgerEvent")
    func declines() throws {
        let delivered = try #require(LedgerEventRoundTripTests.examples.first { $0.type == PurchaseDelivered.eventType })
        let deliveredBytes = Array(try #require(delivered.payload).encoded())
        guard case .object(var fields) = try #require(JSONValue.parsedQuickly(deliveredBytes)) else {
            Issue.record("not an object")
            return
        }
        let original = fields
        let broken: [(String, [String: JSONValue])] = [
            ("quantity as a string", { var f = original; f["quantity"] = .string("1"); return f }()),
            ("user_id missing", { var f = original; f["user_id"] = nil; return f }()),
            ("user_id null", { var f = original; f["user_id"] = .null; return f }()),
            ("is_trial as 1", { var f = original; f["is_trial"] = .integer(1); return f }()),
            ("grants of strings", { var f = original; f["grants"] = .object(["coins": .string("5")]); return f }()),
            ("kind unknown", { var f = original; f["kind"] = .string("lease"); return f }()),
        ]
        for (name, changed) in broken {
            let bytes = Array(JSONValue.object(changed).sortedCompactJSON())
            #expect(LedgerEvent.decodedQuickly(type: delivered.type, value: .object(changed)) == nil, "\(name)")
            #expect(throws: (any Error).self, "\(name)") { try LedgerEvent(type: delivered.type, bytes: bytes) }
            #expect(throws: (any Error).self, "\(name)") { try LedgerJSON.decoder.decode(PurchaseDelivered.self, from: Data(bytes)) }
        }
        fields["quantity"] = .integer(Int64(Int32.max) + 1)
        let wide = Array(JSONValue.object(fields).sortedCompactJSON())
        let decoderSays = try? LedgerJSON.decoder.decode(PurchaseDelivered.self, from: Data(wide))
        let quickSays = try? PayloadValueDecoding.decode(PurchaseDelivered.self, from: .object(fields))
        #expect(quickSays == decoderSays, "a wide quantity: both read it or neither")
    }

    @Test("two keys that name one field after conversion are left to the decoder; a dictionary's keys are kept as written")
    func keys() throws {
        struct Named: Codable, Equatable {
            var productId: String
            var grants: [String: Int64]
        }
        let twice: JSONValue = .object(["product_id": .string("a"), "productId": .string("b"), "grants": .object([:])])
        #expect(throws: PayloadValueDecoding.Declined.self) { try PayloadValueDecoding.decode(Named.self, from: twice) }
        let bytes = Array(#"{"grants":{"gold_coins":5,"Coins":1},"product_id":"p"}"#.utf8)
        let quick = try PayloadValueDecoding.decode(Named.self, from: try #require(JSONValue.parsedQuickly(bytes)))
        #expect(quick == Named(productId: "p", grants: ["gold_coins": 5, "Coins": 1]))
        #expect(quick == (try LedgerJSON.decoder.decode(Named.self, from: Data(bytes))))
        #expect(try LedgerJSON.decode(Named.self, from: bytes) == quick)
    }

    @Test("Foundation's own types and wide numbers are the decoder's; JSONValue fields read the same either way")
    func specials() throws {
        struct Dated: Codable, Equatable { var at: Date }
        struct Wide: Codable, Equatable { var x: Double }
        struct Nested: Codable, Equatable { var body: JSONValue; var list: [Int64?] }
        #expect(throws: PayloadValueDecoding.Declined.self) { try PayloadValueDecoding.decode(Dated.self, from: .object(["at": .integer(5)])) }
        #expect(try LedgerJSON.decode(Dated.self, from: Array(#"{"at":5}"#.utf8)) == Dated(at: Date(timeIntervalSinceReferenceDate: 5)))
        let wide: Int64 = (1 << 53) + 1
        #expect(throws: PayloadValueDecoding.Declined.self) { try PayloadValueDecoding.decode(Wide.self, from: .object(["x": .integer(wide)])) }
        #expect(try LedgerJSON.decode(Wide.self, from: Array(#"{"x":\#(wide)}"#.utf8)) == Wide(x: Double(wide)))
        let text = #"{"body":{"a_b":[1,"x",true,null,{"c":2}]},"list":[1,null,3]}"#
        let quick = try PayloadValueDecoding.decode(Nested.self, from: try #require(JSONValue.parsedQuickly(Array(text.utf8))))
        #expect(quick == (try LedgerJSON.decoder.decode(Nested.self, from: Data(text.utf8))))
        #expect(quick.list == [1, nil, 3])
    }
}

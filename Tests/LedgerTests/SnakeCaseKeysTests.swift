import AppStore
import Foundation
@testable import Ledger
import Testing

/// The ledger's decoder remembers each key's conversion instead of redoing Foundation's on every
/// object; it must still read exactly the names Foundation's `convertFromSnakeCase` reads.
@Suite("snake_case keys, converted once each")
struct SnakeCaseKeysTests {
    /// The names a decoder gives an object's keys.
    struct Names: Decodable {
        var names: Set<String>
        init(from decoder: any Decoder) throws {
            names = Set(try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue))
        }
    }

    static let keys = [
        "transaction_id", "original_transaction_id", "price_milliunits", "a", "", "_", "__", "_leading", "trailing_", "__both__",
        "double__underscore", "APP_ACCOUNT_token", "already_camelCase", "v2_payload_1", "x_1_y", "naïve_über_key", "id", "is_trial",
    ]

    @Test("every key reads as Foundation's convertFromSnakeCase reads it, the first time and from memory")
    func sameNamesAsFoundation() throws {
        let foundation = JSONDecoder()
        foundation.keyDecodingStrategy = .convertFromSnakeCase
        let body = try JSONEncoder().encode(Dictionary(uniqueKeysWithValues: Self.keys.map { ($0, 0) }))
        let expected = try foundation.decode(Names.self, from: body).names
        #expect(expected.contains("originalTransactionId"))
        #expect(try LedgerJSON.decoder.decode(Names.self, from: body).names == expected)
        #expect(try LedgerJSON.decoder.decode(Names.self, from: body).names == expected, "from memory")
    }

    @Test("keys past the limit are converted but not remembered: bodies cannot grow the table without bound")
    func bounded() throws {
        let keys = (0..<(SnakeCaseKeys.limit + 500)).map { "bound_test_key_\($0)" }
        let body = try JSONEncoder().encode(Dictionary(uniqueKeysWithValues: keys.map { ($0, 0) }))
        let names = try LedgerJSON.decoder.decode(Names.self, from: body).names
        #expect(names.count == keys.count)
        #expect(names.contains("boundTestKey4500"))
        #expect(SnakeCaseKeys.rememberedCount.fromSnakeCase <= SnakeCaseKeys.limit)
    }

    /// An object with the given keys, encoded through a keyed container (as every payload's
    /// `CodingKeys` are), so the encoder's key strategy applies.
    struct Keyed: Encodable {
        var keys: [String]
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: AnyKey.self)
            for key in keys { try container.encode(0, forKey: AnyKey(key)) }
        }
    }

    static let camelKeys = [
        "transactionId", "originalTransactionId", "priceMilliunits", "a", "", "_", "_leading", "trailing_", "URLString",
        "appAccountTOKEN", "already_snake", "v2Payload1", "x1Y", "naïveÜberKey", "ID", "isTrial", "HTTPStatus", "userID",
    ]

    @Test("every key is written as Foundation's convertToSnakeCase writes it, the first time and from memory")
    func sameKeysWrittenAsFoundation() throws {
        let foundation = JSONEncoder()
        foundation.keyEncodingStrategy = .convertToSnakeCase
        foundation.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let value = Keyed(keys: Self.camelKeys)
        let expected = try foundation.encode(value)
        #expect(String(decoding: expected, as: UTF8.self).contains("\"original_transaction_id\""))
        #expect(try LedgerJSON.encoder.encode(value) == expected)
        #expect(try LedgerJSON.encoder.encode(value) == expected, "from memory")
    }

    @Test("keys written past the limit are converted but not remembered")
    func boundedWhenWriting() throws {
        let keys = (0..<(SnakeCaseKeys.limit + 500)).map { "boundWriteKey\($0)" }
        let names = try JSONDecoder().decode(Names.self, from: LedgerJSON.encoder.encode(Keyed(keys: keys))).names
        #expect(names.count == keys.count)
        #expect(names.contains("bound_write_key4500"))
        #expect(SnakeCaseKeys.rememberedCount.toSnakeCase <= SnakeCaseKeys.limit)
    }
}

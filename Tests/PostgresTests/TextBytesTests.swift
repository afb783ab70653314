import Foundation
@testable import Postgres
import TestSupport
import Testing

@Suite("Byte scans of statement texts")
struct TextBytesTests {
    @Test("a NUL byte is found wherever it is, in native and bridged strings alike")
    func nul() {
        #expect(!"".holdsNUL)
        #expect(!"SELECT 1".holdsNUL)
        #expect("\u{0}".holdsNUL)
        #expect("SELECT '\u{0}'".holdsNUL)
        #expect((String(repeating: "é", count: 5_000) + "\u{0}").holdsNUL)
        // A string over Foundation's storage may have no contiguous UTF-8: the slow path.
        #expect(String(NSString(string: "ab\u{0}c")).holdsNUL)
        #expect(!String(NSString(string: "abc")).holdsNUL)
    }

    @Test("FNV-1a 64 gives the published values, so prepared names stay what they were")
    func fnv() {
        #expect("".fnv1a == 0xcbf2_9ce4_8422_2325)
        #expect("a".fnv1a == 0xaf63_dc4c_8601_ec8c)
        #expect("foobar".fnv1a == 0x8594_4171_f739_67e8)
        #expect(SQL.prepared("SELECT 1").preparedName == "purchase_ledger_" + String("SELECT 1".fnv1a, radix: 16))
    }

    @Test("a statement whose text holds a NUL is refused before it reaches the server")
    func refused() async throws {
        try await TestDatabase.withSchema { _, pool in
            await #expect(throws: PostgresError.self) {
                try await pool.withConnection { try $0.query(SQL(stringLiteral: "SELECT 1 -- \u{0}")) }
            }
            let fine: Int = try await pool.withConnection { try $0.query("SELECT 1")[0].decode(0) }
            #expect(fine == 1)
        }
    }
}

import Foundation
import Postgres
import TestSupport
import Testing

@Suite("Results in binary format")
struct BinaryResultTests {
    @Test("every decoder reads the binary form as it reads the text form")
    func binaryMatchesText() async throws {
        try await TestDatabase.withSchema { _, pool in
            let uuid = UUID()
            let blob = (0...255).map { UInt8($0) }
            let sql: SQL = """
                SELECT \(Int64.min)::int8, \(Int32.max)::int4, (-12345)::int2, true, false, 1.5::float8, 0.25::float4,
                       \(blob)::bytea, \(uuid)::uuid, '{"b": [1, "é"], "a": null}'::jsonb, 'plain ✓'::text,
                       '2026-11-21 13:45:07.123456+00'::timestamptz, '1999-12-31 23:59:59.999999+00'::timestamptz,
                       'infinity'::timestamptz, NULL::int8
                """
            let (text, binary) = try await pool.withConnection { connection in
                (try connection.query(sql)[0], try connection.query(sql, resultFormat: .binary)[0])
            }
            for row in [text, binary] {
                #expect(try row.decode(0, as: Int64.self) == .min)
                #expect(try row.decode(1, as: Int32.self) == .max)
                #expect(try row.decode(2, as: Int16.self) == -12345)
                #expect(try row.decode(2, as: Int.self) == -12345)
                #expect(try row.decode(3, as: Bool.self) == true)
                #expect(try row.decode(4, as: Bool.self) == false)
                #expect(try row.decode(5, as: Double.self) == 1.5)
                #expect(try row.decode(6, as: Double.self) == 0.25)
                #expect(try row.decode(7, as: [UInt8].self) == blob)
                #expect(try row.decode(8, as: UUID.self) == uuid)
                #expect(try row.decode(9, as: JSONB.self).string == #"{"a": null, "b": [1, "é"]}"#)
                #expect(try row.decode(10, as: String.self) == "plain ✓")
                #expect(try row.decode(11, as: PostgresTimestamp.self).microsecondsSince1970 == 1_795_268_707_123_456)
                #expect(try row.decode(12, as: PostgresTimestamp.self).microsecondsSince1970 == 946_684_799_999_999)
                #expect(try row.decode(13, as: PostgresTimestamp.self) == .infinity)
                #expect(try row.decode(14, as: Int64?.self) == nil)
            }
            #expect(binary[0].format == .binary)
            #expect(text[0].format == .text)
        }
    }

    @Test("a binary integer too wide for the asked type is a decoding error, not a wrap")
    func narrowing() async throws {
        try await TestDatabase.withSchema { _, pool in
            let row = try await pool.withConnection { try $0.query("SELECT 70000::int4", resultFormat: .binary)[0] }
            #expect(throws: PostgresError.self) { try row.decode(0, as: Int16.self) }
        }
    }
}

import Foundation
import Postgres
import TestSupport
import Testing

@Suite("Array parameters")
struct ArrayParameterTests {
    @Test("text elements come back exactly, NULL only where nil")
    func textElements() async throws {
        let values: [String?] = [#"a "quoted" \ back\slash"#, "{braces},commas", "NULL", "", nil, "émoji 🧾", " spaced "]
        try await TestDatabase.withSchema { _, pool in
            let rows = try await pool.withConnection { connection in
                try connection.query("SELECT e FROM unnest(\(PostgresArray(values))::text[]) WITH ORDINALITY AS t(e, n) ORDER BY n")
                    .map { try $0.decode(0, as: String?.self) }
            }
            #expect(rows == values)
        }
    }

    @Test("uuid and jsonb elements arrive typed, with no cast from text")
    func uuidAndJSONBElements() async throws {
        let ids: [UUID?] = [UUID(), nil, UUID(uuidString: "00000000-0000-4000-8000-0000000000FF")]
        let documents: [JSONB?] = [JSONB(#"{"b": [1, 2], "a": "é🧾 \"q\""}"#), nil, JSONB("[]")]
        try await TestDatabase.withSchema { _, pool in
            let rows = try await pool.withConnection { connection in
                try connection.query("""
                    SELECT i, pg_typeof(i)::text, d, jsonb_typeof(d)
                    FROM unnest(\(PostgresArray(ids)), \(PostgresArray(documents))) WITH ORDINALITY AS t(i, d, n) ORDER BY n
                    """).map { row in
                    (try row.decode(0, as: UUID?.self), try row.decode(1, as: String.self),
                     try row.decode(2, as: JSONB?.self), try row.decode(3, as: String?.self))
                }
            }
            #expect(rows.map(\.0) == ids)
            #expect(rows.map(\.1) == ["uuid", "uuid", "uuid"])
            #expect(rows.map(\.2) == [JSONB(#"{"a": "é🧾 \"q\"", "b": [1, 2]}"#), nil, JSONB("[]")])
            #expect(rows.map(\.3) == ["object", nil, "array"])
        }
    }

    @Test("integer elements, with NULLs, bind as one parameter")
    func integerElements() async throws {
        let values: [Int64?] = [.min, -1, 0, nil, .max]
        try await TestDatabase.withSchema { _, pool in
            let rows = try await pool.withConnection { connection in
                try connection.query("SELECT e FROM unnest(\(PostgresArray(values))::bigint[]) WITH ORDINALITY AS t(e, n) ORDER BY n")
                    .map { try $0.decode(0, as: Int64?.self) }
            }
            #expect(rows == values)
        }
    }
}
